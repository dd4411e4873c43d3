//! `flashlane probe`: the curves of PASS's Figs. 1-3 measured on the user's drive.
//!
//! * `parallelism` (Fig. 2): throughput of random requests of `block_bytes` within the first
//!   `region_bytes` of the target against the number kept outstanding, for several region
//!   sizes, reads and writes. These are the curves `device.region_contention.probe_path`
//!   reads (device/drive_probe.rs in flashlane-core).
//! * `sizes` (Fig. 1): sequential against random, reads and writes, by request size, at the
//!   paper's default of 8 outstanding, over the whole target.
//! * `interference` (Fig. 3): sequential reads mixed with random writes, sequential writes
//!   with random reads, sequential reads with sequential writes, by the share of the second
//!   kind.
//!
//! Each point keeps its requests outstanding (a closed loop through io_uring, O_DIRECT) for a
//! warm-up, then measures for `point_ms`; throughput is bytes completed in the measured part
//! over its length, latency is submission to completion.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use flashlane_core::device::{CurvePoint, ParallelismCurve, ProbeOperation, PROBE_SCHEMA_VERSION};
use flashlane_core::Error;

use crate::target::{self, Kind, Plan, Target, TargetInfo, TargetOptions};
use crate::uring::{BufferPool, Direction, Engine, Io};
use crate::verify::{self, BLOCK_BYTES};

/// What to measure.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    pub target: TargetOptions,
    /// Bytes of a target flashlane creates (default [`DEFAULT_NEW_TARGET_BYTES`]).
    pub size_bytes: Option<u64>,
    /// Measured time of each point (after its warm-up of a fifth of it).
    pub point_ms: u64,
    /// Request size of Figs. 2 and 3.
    pub block_bytes: u64,
    /// Outstanding requests of Fig. 2's points.
    pub outstanding_requests: Vec<u32>,
    /// Region sizes of Fig. 2 (default: the target's size over 16, 8, 4, 2 and 1).
    pub region_bytes: Vec<u64>,
    /// Request sizes of Fig. 1.
    pub request_bytes: Vec<u64>,
    /// Shares of the second kind in Fig. 3, percent.
    pub mix_percent: Vec<u32>,
    pub seed: u64,
}

pub const DEFAULT_NEW_TARGET_BYTES: u64 = 1 << 30;
/// PASS Sec. 2: "The default queue depth ... set to 8".
pub const PAPER_OUTSTANDING_REQUESTS: u32 = 8;

impl ProbeSpec {
    /// The defaults, measuring `target`.
    pub fn new(target: TargetOptions) -> ProbeSpec {
        ProbeSpec {
            target,
            size_bytes: None,
            point_ms: 250,
            block_bytes: 4096,
            outstanding_requests: vec![1, 2, 4, 8, 16, 32, 64],
            region_bytes: Vec::new(),
            request_bytes: vec![4096, 8192, 16384, 32768, 65536, 131072, 262144],
            mix_percent: vec![0, 10, 25, 50, 75, 90, 100],
            seed: 1,
        }
    }
}

/// The probe JSON (its `parallelism` is what the simulator reads).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeReport {
    pub schema_version: u32,
    /// The target measured (see the replay summary's `device`).
    pub target: serde_json::Value,
    pub settings: ProbeSettings,
    pub parallelism: Vec<ParallelismCurve>,
    pub sizes: Vec<SizeCurve>,
    /// Left empty under `--reads-only` (every mix has writes).
    pub interference: Vec<MixCurve>,
    pub wall_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeSettings {
    pub point_ms: u64,
    pub warmup_ms: u64,
    pub block_bytes: u64,
    pub outstanding_requests: Vec<u32>,
    pub region_bytes: Vec<u64>,
    pub request_bytes: Vec<u64>,
    pub mix_percent: Vec<u32>,
    /// Outstanding requests of Figs. 1 and 3.
    pub sizes_and_mixes_outstanding_requests: u32,
    pub seed: u64,
    pub reads_only: bool,
}

/// Fig. 1, one line: throughput by request size.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SizeCurve {
    pub operation: ProbeOperation,
    /// `sequential` or `random`.
    pub pattern: String,
    pub points: Vec<SizePoint>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SizePoint {
    pub request_bytes: u64,
    #[serde(flatten)]
    pub measured: Measured,
}

/// Fig. 3, one line: throughput by the share of the second kind of request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MixCurve {
    /// `seq_read+rand_write`, `seq_write+rand_read` or `seq_read+seq_write`.
    pub mix: String,
    pub points: Vec<MixPoint>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MixPoint {
    /// Percent of requests of the second kind.
    pub second_percent: u32,
    #[serde(flatten)]
    pub measured: Measured,
}

/// One point's figures.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    pub requests: u64,
    pub iops: f64,
    pub mib_per_s: f64,
    pub mean_latency_us: f64,
}

/// How one kind of request picks its place.
#[derive(Debug, Clone, Copy)]
enum Pattern {
    Random,
    Sequential,
}

/// One kind of request of a point: direction, pattern, within `[start, end)`.
#[derive(Debug, Clone, Copy)]
struct Stream {
    direction: Direction,
    pattern: Pattern,
    start: u64,
    end: u64,
}

/// A point: requests of `bytes`, each of `second` with probability `second_percent`, else of
/// `first`, `outstanding` at once.
#[derive(Debug, Clone, Copy)]
struct Point {
    first: Stream,
    second: Stream,
    second_percent: u32,
    bytes: u64,
    outstanding: u32,
}

/// xorshift64*: addresses and mixes, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

struct Prober {
    engine: Engine<(u64, Direction)>,
    pool: BufferPool,
    path: std::path::PathBuf,
    warmup: Duration,
    measure: Duration,
    write_version: u64,
    points_done: u64,
    points_total: u64,
}

impl Prober {
    fn error(&self, e: impl std::fmt::Display) -> Error {
        Error::Target(format!("{}: {e}", self.path.display()))
    }

    fn run(&mut self, point: Point, rng: &mut Rng) -> Result<Measured, Error> {
        let started = Instant::now();
        let now = || started.elapsed().as_nanos() as u64;
        let from = self.warmup.as_nanos() as u64;
        let to = from + self.measure.as_nanos() as u64;
        let mut cursors = [point.first.start, point.second.start];
        let (mut requests, mut bytes, mut latency_ns) = (0u64, 0u64, 0u128);
        let mut done = Vec::new();
        loop {
            let t = now();
            while t < to && self.engine.in_flight() < point.outstanding as usize {
                let which = usize::from(rng.below(100) < u64::from(point.second_percent));
                let stream = if which == 0 {
                    point.first
                } else {
                    point.second
                };
                let slots = (stream.end - stream.start) / point.bytes;
                let offset = match stream.pattern {
                    Pattern::Random => stream.start + rng.below(slots) * point.bytes,
                    Pattern::Sequential => {
                        if cursors[which] + point.bytes > stream.end {
                            cursors[which] = stream.start;
                        }
                        cursors[which] += point.bytes;
                        cursors[which] - point.bytes
                    }
                };
                let mut buf = self.pool.take(point.bytes as usize);
                if stream.direction == Direction::Write {
                    self.write_version += 1;
                    verify::fill(buf.as_mut_slice(), offset / BLOCK_BYTES, self.write_version);
                }
                self.engine
                    .push(Io {
                        direction: stream.direction,
                        offset_bytes: offset,
                        buf,
                        tag: (now(), stream.direction),
                    })
                    .map_err(|e| self.error(e))?;
            }
            if self.engine.in_flight() == 0 {
                break;
            }
            self.engine.wait(None).map_err(|e| self.error(e))?;
            self.engine.reap(&mut done);
            let t = now();
            for d in done.drain(..) {
                let len = d.io.buf.as_slice().len();
                match d.result {
                    Ok(n) if n == len => {}
                    Ok(n) => return Err(self.error(format!("an I/O moved {n} of {len} bytes"))),
                    Err(e) => {
                        return Err(self.error(format!(
                            "I/O at byte offset {} failed: {e}",
                            d.io.offset_bytes
                        )))
                    }
                }
                if (from..to).contains(&t) {
                    requests += 1;
                    bytes += len as u64;
                    latency_ns += u128::from(t - d.io.tag.0);
                }
                self.pool.give(d.io.buf);
            }
        }
        let seconds = self.measure.as_secs_f64();
        self.points_done += 1;
        Ok(Measured {
            requests,
            iops: requests as f64 / seconds,
            mib_per_s: bytes as f64 / (1u64 << 20) as f64 / seconds,
            mean_latency_us: if requests == 0 {
                0.0
            } else {
                latency_ns as f64 / requests as f64 / 1000.0
            },
        })
    }
}

fn direction(op: ProbeOperation) -> Direction {
    match op {
        ProbeOperation::Read => Direction::Read,
        ProbeOperation::Write => Direction::Write,
    }
}

fn check_spec(spec: &ProbeSpec) -> Result<(), Error> {
    let bad = |m: String| Err(Error::Config(m));
    if spec.point_ms == 0 || spec.point_ms > 600_000 {
        return bad(format!("--point-ms {}: must be 1 to 600000", spec.point_ms));
    }
    for (name, list) in [
        ("--block-bytes", vec![spec.block_bytes]),
        ("--request-bytes", spec.request_bytes.clone()),
        ("--region-bytes", spec.region_bytes.clone()),
    ] {
        if let Some(b) = list.iter().find(|b| **b == 0 || **b % BLOCK_BYTES != 0) {
            return bad(format!("{name} {b}: must be a positive multiple of 512"));
        }
    }
    if let Some(b) = spec.request_bytes.iter().find(|b| **b > 64 << 20) {
        return bad(format!("--request-bytes {b}: at most 64 MiB"));
    }
    if spec.outstanding_requests.is_empty()
        || spec
            .outstanding_requests
            .iter()
            .any(|k| *k == 0 || *k > 4096)
    {
        return bad(format!(
            "--outstanding {:?}: give 1 to 4096 requests per point",
            spec.outstanding_requests
        ));
    }
    if spec.outstanding_requests.windows(2).any(|w| w[0] >= w[1]) {
        return bad(format!(
            "--outstanding {:?}: must increase",
            spec.outstanding_requests
        ));
    }
    if let Some(p) = spec.mix_percent.iter().find(|p| **p > 100) {
        return bad(format!("--mix-percent {p}: at most 100"));
    }
    Ok(())
}

/// Measure the target of `spec`. `created` hears of a file created for the probe at once;
/// `progress` gets (points done, points in all) now and then.
pub fn probe(
    spec: &ProbeSpec,
    created: &mut dyn FnMut(&std::path::Path),
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ProbeReport, Error> {
    check_spec(spec)?;
    let o = &spec.target;
    let kind = target::inspect(&o.path)?;
    let writes = u64::from(!o.reads_only);
    let plan = target::decide(&o.path, &kind, writes, o)?;
    let size = match (&kind, spec.size_bytes) {
        (Kind::Missing | Kind::File { size_bytes: 0 }, size) => {
            size.unwrap_or(DEFAULT_NEW_TARGET_BYTES)
        }
        (_, Some(size)) => {
            return Err(Error::Config(format!(
                "--size-bytes {size}: only a target flashlane creates is sized; {} exists",
                o.path.display()
            )))
        }
        (Kind::File { size_bytes }, None) | (Kind::BlockDevice { size_bytes, .. }, None) => {
            *size_bytes
        }
    };
    let info = target::describe(&o.path, &kind, false, 0, 0);
    let alignment = info.logical_block_bytes.unwrap_or(4096).max(BLOCK_BYTES);
    let size = size / alignment * alignment;
    let largest = spec
        .request_bytes
        .iter()
        .chain(&spec.region_bytes)
        .copied()
        .chain([spec.block_bytes * 2])
        .max()
        .unwrap_or(0);
    if size < largest {
        return Err(Error::Config(format!(
            "{}: {size} bytes is too small for a region or request of {largest} bytes",
            o.path.display()
        )));
    }
    for b in spec
        .request_bytes
        .iter()
        .chain(&spec.region_bytes)
        .chain([&spec.block_bytes])
    {
        if b % alignment != 0 {
            return Err(Error::Config(format!(
                "{b} bytes is not a multiple of the target's direct-I/O alignment of {alignment}"
            )));
        }
    }
    if let Plan::Create { .. } = plan {
        crate::replay::check_free_space(&o.path, size)?;
    }
    let regions: Vec<u64> = if spec.region_bytes.is_empty() {
        [16, 8, 4, 2, 1]
            .iter()
            .map(|d| size / d / spec.block_bytes * spec.block_bytes)
            .filter(|r| *r >= spec.block_bytes * 2)
            .collect()
    } else {
        spec.region_bytes.clone()
    };
    let started = Instant::now();
    let target = Target::open(o, &kind, plan, size, created)?;
    let depth = spec
        .outstanding_requests
        .iter()
        .copied()
        .chain([PAPER_OUTSTANDING_REQUESTS])
        .max()
        .unwrap_or(1);
    let engine = Engine::new(&target.file, depth).map_err(Error::Target)?;
    let measure = Duration::from_millis(spec.point_ms);
    let ops: &[ProbeOperation] = if o.reads_only {
        &[ProbeOperation::Read]
    } else {
        &[ProbeOperation::Read, ProbeOperation::Write]
    };
    let points_total = (ops.len() * regions.len() * spec.outstanding_requests.len()
        + ops.len() * 2 * spec.request_bytes.len()
        + if o.reads_only {
            0
        } else {
            3 * spec.mix_percent.len()
        }) as u64;
    let mut p = Prober {
        engine,
        pool: BufferPool::default(),
        path: o.path.clone(),
        warmup: measure / 5,
        measure,
        write_version: 0,
        points_done: 0,
        points_total,
    };
    if let Plan::Create { .. } = plan {
        fill_all(&mut p, size)?;
        target.file.sync_data().map_err(|e| p.error(e))?;
    }
    let mut rng = Rng::new(spec.seed);
    let whole = |d: Direction, pattern: Pattern, start: u64, end: u64| Stream {
        direction: d,
        pattern,
        start,
        end,
    };
    let mut report = |p: &Prober| progress(p.points_done, p.points_total);

    let mut parallelism = Vec::new();
    for &op in ops {
        for &region in &regions {
            let stream = whole(direction(op), Pattern::Random, 0, region);
            let mut points = Vec::new();
            for &k in &spec.outstanding_requests {
                let m = p.run(
                    Point {
                        first: stream,
                        second: stream,
                        second_percent: 0,
                        bytes: spec.block_bytes,
                        outstanding: k,
                    },
                    &mut rng,
                )?;
                report(&p);
                points.push(CurvePoint {
                    outstanding_requests: k,
                    requests: m.requests,
                    iops: m.iops,
                    mib_per_s: m.mib_per_s,
                    mean_latency_us: m.mean_latency_us,
                });
            }
            parallelism.push(ParallelismCurve::new(op, region, spec.block_bytes, points));
        }
    }

    let mut sizes = Vec::new();
    for &op in ops {
        for (pattern, name) in [
            (Pattern::Sequential, "sequential"),
            (Pattern::Random, "random"),
        ] {
            let stream = whole(direction(op), pattern, 0, size);
            let mut points = Vec::new();
            for &bytes in &spec.request_bytes {
                let measured = p.run(
                    Point {
                        first: stream,
                        second: stream,
                        second_percent: 0,
                        bytes,
                        outstanding: PAPER_OUTSTANDING_REQUESTS,
                    },
                    &mut rng,
                )?;
                report(&p);
                points.push(SizePoint {
                    request_bytes: bytes,
                    measured,
                });
            }
            sizes.push(SizeCurve {
                operation: op,
                pattern: name.into(),
                points,
            });
        }
    }

    let mut interference = Vec::new();
    if !o.reads_only {
        let half = size / 2 / spec.block_bytes * spec.block_bytes;
        let (r, w) = (Direction::Read, Direction::Write);
        let (seq, rnd) = (Pattern::Sequential, Pattern::Random);
        for (name, first, second) in [
            (
                "seq_read+rand_write",
                whole(r, seq, 0, size),
                whole(w, rnd, 0, size),
            ),
            (
                "seq_write+rand_read",
                whole(w, seq, 0, size),
                whole(r, rnd, 0, size),
            ),
            // Two sequential streams, each in its own half.
            (
                "seq_read+seq_write",
                whole(r, seq, 0, half),
                whole(w, seq, half, 2 * half),
            ),
        ] {
            let mut points = Vec::new();
            for &share in &spec.mix_percent {
                let measured = p.run(
                    Point {
                        first,
                        second,
                        second_percent: share,
                        bytes: spec.block_bytes,
                        outstanding: PAPER_OUTSTANDING_REQUESTS,
                    },
                    &mut rng,
                )?;
                report(&p);
                points.push(MixPoint {
                    second_percent: share,
                    measured,
                });
            }
            interference.push(MixCurve {
                mix: name.into(),
                points,
            });
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    let mut info: TargetInfo = target::describe(&o.path, &kind, target.created(), size, alignment);
    info.direct_io_alignment_bytes = alignment;
    drop(p);
    target.finish()?;
    Ok(ProbeReport {
        schema_version: PROBE_SCHEMA_VERSION,
        target: serde_json::to_value(info).unwrap_or(serde_json::Value::Null),
        settings: ProbeSettings {
            point_ms: spec.point_ms,
            warmup_ms: spec.point_ms / 5,
            block_bytes: spec.block_bytes,
            outstanding_requests: spec.outstanding_requests.clone(),
            region_bytes: regions,
            request_bytes: spec.request_bytes.clone(),
            mix_percent: spec.mix_percent.clone(),
            sizes_and_mixes_outstanding_requests: PAPER_OUTSTANDING_REQUESTS,
            seed: spec.seed,
            reads_only: o.reads_only,
        },
        parallelism,
        sizes,
        interference,
        wall_s,
    })
}

/// Write the pattern (version 0) over the whole of a created target, so every read finds data.
fn fill_all(p: &mut Prober, size: u64) -> Result<(), Error> {
    const CHUNK: u64 = 1 << 20;
    let mut at = 0;
    let mut done = Vec::new();
    loop {
        while at < size && p.engine.in_flight() < 8 {
            let len = (size - at).min(CHUNK);
            let mut buf = p.pool.take(len as usize);
            verify::fill(buf.as_mut_slice(), at / BLOCK_BYTES, 0);
            p.engine
                .push(Io {
                    direction: Direction::Write,
                    offset_bytes: at,
                    buf,
                    tag: (0, Direction::Write),
                })
                .map_err(|e| p.error(e))?;
            at += len;
        }
        if p.engine.in_flight() == 0 {
            return Ok(());
        }
        p.engine.wait(None).map_err(|e| p.error(e))?;
        p.engine.reap(&mut done);
        for d in done.drain(..) {
            let len = d.io.buf.as_slice().len();
            match d.result {
                Ok(n) if n == len => {}
                Ok(n) => return Err(p.error(format!("the fill moved {n} of {len} bytes"))),
                Err(e) => return Err(p.error(format!("the fill failed: {e}"))),
            }
            p.pool.give(d.io.buf);
        }
    }
}
