//! `flashlane replay`: a trace through the simulator's host schedulers onto a real target.
//!
//! The same code as a simulation decides what happens on the host side: the input pipeline
//! (`run::Inputs`), the replay mode (`run::Pacing`), the host queue's bound and the chip
//! counts (`host::QueueBound`, `host::ChipLoad`), the host scheduler itself, and the
//! statistics (`stats::RequestRecorder`, `HostQueueRecorder`, the warnings). What the
//! simulator's device does, a real one does here: every command the scheduler pops goes to
//! the target through io_uring, at most `device.queue_depth_requests` at once, and completes
//! when the drive says so. Time is the wall clock from the start of the replay.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flashlane_core::config::Config;
use flashlane_core::geometry::{Geometry, StaticMap};
use flashlane_core::host::{
    page_span, AnyHostScheduler, ChipLoad, HandoverAt, HandoverPerPass, HostRequest, HostScheduler,
    HostSchedulerConfig, HostView, QueueBound, RequestId,
};
use flashlane_core::run::{AddressPolicy, Arrival, Inputs, Pacing, Replay, TraceInput};
use flashlane_core::stats::{
    warnings, DispatchLog, HostQueueRecorder, NamedReport, RequestFigures, RequestMarks,
    RequestRecorder, RunOptions, RunShape, SourceSummary, TraceSummary, WarningInputs,
};
use flashlane_core::trace::Op;
use flashlane_core::{Error, RunSpec};

use crate::summary::{
    AssumedLayout, Lag, QueueDepth, RealDevice, ReplayConfig, ReplayEngine, ReplayFacts,
    ReplaySummary, VerifyStats, REPLAY_SCHEMA_VERSION,
};
use crate::target::{self, Kind, Plan, Target, TargetOptions};
use crate::uring::{BufferPool, Direction, Done, Engine, Io};
use crate::verify::{self, ReadSnapshot, Versions, BLOCK_BYTES};

/// Everything one replay needs.
#[derive(Debug, Clone)]
pub struct ReplaySpec {
    /// The workload and the config (host scheduler, host queue, device queue depth, and for
    /// PIQ and VIOS the static map as an assumed layout), as `flashlane run` takes them.
    pub run: RunSpec,
    pub target: TargetOptions,
    /// Bytes of a target flashlane creates; `None`: the trace's span.
    pub size_bytes: Option<u64>,
    /// Check every block read against what the replay wrote (`--verify`).
    pub verify: bool,
    /// Keep the hand-over order (`--dispatch-log`).
    pub dispatch_log: bool,
}

/// Where a replay is, for a progress display.
#[derive(Debug, Clone, Copy)]
pub enum ReplayProgress {
    /// Filling a created target: bytes written of the total.
    Filling { done_bytes: u64, total_bytes: u64 },
    /// Replaying: records read of the total.
    Replaying { records: u64, total_records: u64 },
}

/// What the caller hears of during a replay.
pub struct Callbacks<'a> {
    /// A file was created for the run (removed at its end unless kept): at once, so a signal
    /// handler can remove it.
    pub created: &'a mut dyn FnMut(&Path),
    pub progress: &'a mut dyn FnMut(ReplayProgress),
}

/// Bytes of address space a new file's trace may use when `--size-bytes` is not given (the
/// file is then sized to the span actually used).
const UNSIZED_SPACE_BYTES: u64 = 1 << 50;
/// Largest I/O of the fill.
const FILL_IO_BYTES: u64 = 1 << 20;
/// Granule of the fill (whole pages of 4 KiB around every byte read).
const FILL_GRAIN_BYTES: u64 = 4096;
/// Records between two progress reports.
const PROGRESS_RECORDS: u64 = 1 << 12;

/// What a pass over the trace found before anything is touched.
struct Survey {
    records: u64,
    writes: u64,
    /// End of the last byte addressed (aligned).
    span_bytes: u64,
    /// Byte ranges read, merged, in fill grains.
    read_ranges: Vec<(u64, u64)>,
}

/// How the records reach the replay: writes dropped under `--reads-only`, offsets and sizes
/// widened to the direct-I/O alignment.
struct Source {
    inputs: Inputs,
    reads_only: bool,
    alignment: u64,
    writes_left_out: u64,
    realigned: u64,
}

impl Source {
    fn next(&mut self) -> Result<Option<Arrival>, Error> {
        loop {
            let Some(mut arrival) = self.inputs.next_arrival()? else {
                return Ok(None);
            };
            let r = &mut arrival.record;
            if self.reads_only && r.op == Op::Write {
                self.writes_left_out += 1;
                continue;
            }
            let start = r.offset_bytes / self.alignment * self.alignment;
            let end = (r.offset_bytes + r.size_bytes).div_ceil(self.alignment) * self.alignment;
            if start != r.offset_bytes || end - start != r.size_bytes {
                self.realigned += 1;
                r.offset_bytes = start;
                r.size_bytes = end - start;
            }
            return Ok(Some(arrival));
        }
    }
}

fn open_source(
    spec: &ReplaySpec,
    traces: &[TraceInput],
    capacity_bytes: u64,
    alignment: u64,
) -> Result<Source, Error> {
    Ok(Source {
        inputs: Inputs::open(
            traces,
            spec.run.addresses,
            spec.run.replay,
            capacity_bytes,
            u64::from(spec.run.config.geometry.page_bytes),
        )?,
        reads_only: spec.target.reads_only,
        alignment,
        writes_left_out: 0,
        realigned: 0,
    })
}

/// The first pass: count the records and writes, find the span and the ranges read.
fn survey(spec: &ReplaySpec, source: &mut Source) -> Result<Survey, Error> {
    let mut pacing = Pacing::new(spec.run.replay, spec.run.max_requests);
    let mut s = Survey {
        records: 0,
        writes: 0,
        span_bytes: 0,
        read_ranges: Vec::new(),
    };
    while let Some(a) = pacing.next(&mut || source.next())? {
        let r = a.record;
        s.records += 1;
        let end = r.offset_bytes + r.size_bytes;
        s.span_bytes = s.span_bytes.max(end);
        match r.op {
            Op::Write => s.writes += 1,
            Op::Read => s.read_ranges.push((
                r.offset_bytes / FILL_GRAIN_BYTES * FILL_GRAIN_BYTES,
                end.div_ceil(FILL_GRAIN_BYTES) * FILL_GRAIN_BYTES,
            )),
        }
    }
    s.read_ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(s.read_ranges.len());
    for (start, end) in s.read_ranges.drain(..) {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    s.read_ranges = merged;
    Ok(s)
}

/// Rules of the simulated platform a real host has no use for: refused, not ignored.
fn check_config(spec: &ReplaySpec) -> Result<(), Error> {
    let host = &spec.run.config.host;
    let simulated = |key: &str, value: &str| {
        Err(Error::Config(format!(
            "{key} = {value} is a rule of SSDsim's simulated device; a real replay hands a \
             request to the drive whenever it has room (--set {key} to its default, or use a \
             config without it)"
        )))
    };
    if host.handover_at != HandoverAt::Arrival {
        return simulated("host.handover_at", "\"next_device_event\"");
    }
    if host.handover_per_pass != HandoverPerPass::All {
        return simulated("host.handover_per_pass", "\"one\"");
    }
    if host.handover_needs_idle_channels {
        return simulated("host.handover_needs_idle_channels", "true");
    }
    if spec.run.precondition_cache.is_some() {
        return Err(Error::Config(
            "a precondition cache holds simulated drives; a real replay has none to load".into(),
        ));
    }
    if spec.run.check_integrity {
        return Err(Error::Config(
            "--check-integrity checks the simulator's mapping; a real replay checks the data \
             it reads with --verify"
                .into(),
        ));
    }
    if spec
        .run
        .config
        .host
        .scheduler
        .piq_cycles_with_ssdsim_passes()
    {
        return Err(Error::Config(
            "host.scheduler: batch_cycles has no meaning under issue_rule = \"ssdsim_passes\""
                .into(),
        ));
    }
    spec.run.replay.validate()
}

/// Does this scheduler group requests by the chips of the static map?
fn uses_chip_layout(scheduler: &HostSchedulerConfig) -> bool {
    matches!(
        scheduler,
        HostSchedulerConfig::PiqR { .. }
            | HostSchedulerConfig::PiqW { .. }
            | HostSchedulerConfig::Piq { .. }
            | HostSchedulerConfig::Vios { .. }
    )
}

fn assumed_layout(config: &Config) -> Option<AssumedLayout> {
    uses_chip_layout(&config.host.scheduler).then(|| {
        let g = &config.geometry;
        AssumedLayout {
            from_config: config.name.clone(),
            channels: g.channels,
            chips_per_channel: g.chips_per_channel,
            dies_per_chip: g.dies_per_chip,
            planes_per_die: g.planes_per_die,
            page_bytes: g.page_bytes,
            order: config.static_order(),
            stripe_unit_pages: config.ftl.stripe_unit_pages,
            note: "the scheduler's chip sets come from this static map, assumed: the drive's \
                   own layout is not known to the host",
        }
    })
}

/// Replay `spec`; the summary and, if asked for, the hand-over order.
pub fn replay(
    spec: &ReplaySpec,
    callbacks: Callbacks,
) -> Result<(ReplaySummary, Option<DispatchLog>), Error> {
    check_config(spec)?;
    spec.run.config.validate().map_err(Error::Config)?;
    let o = &spec.target;
    let kind = target::inspect(&o.path)?;
    if let Some(size) = spec.size_bytes {
        if !matches!(kind, Kind::Missing | Kind::File { size_bytes: 0 }) {
            return Err(Error::Config(format!(
                "--size-bytes {size}: only a target flashlane creates is sized; {} exists",
                o.path.display()
            )));
        }
    }
    if spec.run.addresses == AddressPolicy::Fold
        && matches!(kind, Kind::Missing | Kind::File { size_bytes: 0 })
        && spec.size_bytes.is_none()
    {
        return Err(Error::Config(
            "--fold-addresses: a created target is sized to the trace's span, so nothing \
             needs folding; give its size with --size-bytes, or use an existing target"
                .into(),
        ));
    }
    let info = target::describe(&o.path, &kind, false, 0, 0);
    let alignment = info.logical_block_bytes.unwrap_or(4096).max(BLOCK_BYTES);
    let capacity = match (&kind, spec.size_bytes) {
        (_, Some(size)) => size,
        (Kind::File { size_bytes }, _) | (Kind::BlockDevice { size_bytes, .. }, _)
            if *size_bytes > 0 =>
        {
            *size_bytes
        }
        _ => UNSIZED_SPACE_BYTES,
    };
    let capacity = capacity / alignment * alignment;
    // A pipe can be read only once: copied now, as `run` does.
    let mut traces = spec.run.traces.clone();
    for t in &mut traces {
        t.spill_if_stream()?;
    }
    let mut source = open_source(spec, &traces, capacity, alignment)?;
    let found = survey(spec, &mut source)?;
    let plan = target::decide(&o.path, &kind, found.writes, o)?;
    let size_bytes = match plan {
        Plan::Create { .. } => spec
            .size_bytes
            .unwrap_or(found.span_bytes.div_ceil(FILL_GRAIN_BYTES) * FILL_GRAIN_BYTES)
            .max(FILL_GRAIN_BYTES),
        _ => capacity,
    };
    let fill_bytes: u64 = match plan {
        Plan::Create { .. } => found.read_ranges.iter().map(|(s, e)| e - s).sum(),
        _ => 0,
    };
    if let Plan::Create { .. } = plan {
        check_free_space(&o.path, fill_bytes)?;
    }
    let target = Target::open(o, &kind, plan, size_bytes, callbacks.created)?;
    let dio = target::direct_io_alignment(&target.file, info.logical_block_bytes);
    if !alignment.is_multiple_of(dio) {
        return Err(Error::Target(format!(
            "{}: direct I/O needs offsets aligned to {dio} bytes, more than the disk's \
             logical block of {alignment}",
            o.path.display()
        )));
    }
    let depth = spec.run.config.device.queue_depth_requests.max(1);
    let mut engine: Engine<Tag> =
        Engine::new(&target.file, depth).map_err(|e| Error::Target(e.to_string()))?;
    let mut pool = BufferPool::default();
    let fill_started = Instant::now();
    if fill_bytes > 0 {
        fill(
            &target,
            &mut engine,
            &mut pool,
            &found.read_ranges,
            fill_bytes,
            callbacks.progress,
        )?;
    }
    let fill_wall_s = fill_started.elapsed().as_secs_f64();
    let mut source = open_source(spec, &traces, capacity, alignment)?;
    let mut replayer = Replayer::new(spec, &target, engine, pool, found.records);
    replayer.run(&mut source, callbacks.progress)?;
    let wall_s = replayer.started.elapsed().as_secs_f64();
    let mut info = target::describe(&o.path, &kind, target.created(), size_bytes, alignment);
    info.direct_io_alignment_bytes = alignment;
    let summary = replayer.summary(
        spec,
        &source,
        info,
        fill_bytes,
        ReplayEngineTimes {
            wall_s,
            fill_wall_s,
        },
    );
    let log = replayer.dispatch_log.take();
    drop(replayer);
    target.finish()?;
    Ok((summary, log))
}

/// Refuse a fill the filesystem has no room for (before anything is created).
pub(crate) fn check_free_space(path: &Path, bytes: u64) -> Result<(), Error> {
    use std::os::unix::ffi::OsStrExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: statvfs(2) fills the zeroed struct we own from a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Ok(());
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    // Keep a margin: the run's own writes and the filesystem's metadata need room too.
    if bytes.saturating_add(bytes / 10) > free {
        // The target may be an empty file that exists (a size-0 file of /proc among them).
        let into = if path.exists() {
            "into this empty file"
        } else {
            "into a new file there"
        };
        return Err(Error::Target(format!(
            "{}: flashlane would first write {bytes} bytes {into}, and {} has \
             {free} bytes free (a replay: --remap-addresses packs the trace's footprint, \
             --max-requests shortens it; a probe: --size-bytes)",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// What an I/O is for.
enum Tag {
    Fill,
    Request {
        command: u32,
        first_block: u64,
        blocks: u64,
        snapshot: Option<ReadSnapshot>,
    },
}

fn io_error(path: &Path, io: &Io<Tag>, e: impl std::fmt::Display) -> Error {
    let what = match io.direction {
        Direction::Read => "read",
        Direction::Write => "write",
    };
    Error::Target(format!(
        "{}: {what} of {} bytes at byte offset {} failed: {e}",
        path.display(),
        io.buf.as_slice().len(),
        io.offset_bytes
    ))
}

/// Check a finished I/O moved all its bytes.
fn finished(path: &Path, done: &Done<Tag>) -> Result<(), Error> {
    match &done.result {
        Ok(n) if *n == done.io.buf.as_slice().len() => Ok(()),
        Ok(n) => Err(io_error(path, &done.io, format!("moved only {n} bytes"))),
        Err(e) => Err(io_error(path, &done.io, e)),
    }
}

/// Write version 0 of the pattern over every range the trace reads (a created target holds
/// no data: an unwritten range of a file is read as zeros without touching the drive).
fn fill(
    target: &Target,
    engine: &mut Engine<Tag>,
    pool: &mut BufferPool,
    ranges: &[(u64, u64)],
    total: u64,
    progress: &mut dyn FnMut(ReplayProgress),
) -> Result<(), Error> {
    const FILL_DEPTH: usize = 8;
    let mut done = Vec::new();
    let mut written = 0u64;
    let mut pieces = ranges.iter().flat_map(|&(start, end)| {
        (start..end)
            .step_by(FILL_IO_BYTES as usize)
            .map(move |at| (at, (end - at).min(FILL_IO_BYTES)))
    });
    let mut last_report = Instant::now();
    loop {
        while engine.in_flight() < FILL_DEPTH {
            let Some((at, len)) = pieces.next() else {
                break;
            };
            let mut buf = pool.take(len as usize);
            verify::fill(buf.as_mut_slice(), at / BLOCK_BYTES, 0);
            engine
                .push(Io {
                    direction: Direction::Write,
                    offset_bytes: at,
                    buf,
                    tag: Tag::Fill,
                })
                .map_err(|e| Error::Target(format!("{}: {e}", target.path.display())))?;
        }
        if engine.in_flight() == 0 {
            break;
        }
        engine
            .wait(None)
            .map_err(|e| Error::Target(format!("{}: {e}", target.path.display())))?;
        engine.reap(&mut done);
        for d in done.drain(..) {
            finished(&target.path, &d)?;
            written += d.io.buf.as_slice().len() as u64;
            pool.give(d.io.buf);
        }
        if last_report.elapsed() >= Duration::from_secs(1) {
            last_report = Instant::now();
            progress(ReplayProgress::Filling {
                done_bytes: written,
                total_bytes: total,
            });
        }
    }
    // The fill's data and block allocation on the medium before the replay measures anything.
    target.file.sync_data().map_err(|e| {
        Error::Target(format!(
            "{}: cannot sync the fill: {e}",
            target.path.display()
        ))
    })
}

struct ReplayEngineTimes {
    wall_s: f64,
    fill_wall_s: f64,
}

/// A request in the host queue or the device.
#[derive(Clone, Copy)]
struct Live {
    host: HostRequest,
    marks: RequestMarks,
}

/// A device command: the requests the scheduler popped together, and its I/Os in flight.
#[derive(Default)]
struct Command {
    members: Vec<RequestId>,
    pending_ios: u32,
}

struct Replayer {
    started: Instant,
    path: PathBuf,
    host: AnyHostScheduler,
    bound: QueueBound,
    chip_load: ChipLoad,
    geometry: Geometry,
    static_map: StaticMap,
    page_bytes: u64,
    pacing: Pacing,
    depth: u32,
    total_records: u64,

    requests: Vec<Live>,
    free_requests: Vec<RequestId>,
    live_requests: u64,
    outstanding_requests: u32,
    commands: Vec<Command>,
    free_commands: Vec<u32>,
    outstanding_commands: u32,
    pop_buffer: Vec<RequestId>,

    lookahead: Option<Arrival>,
    /// Open loop: when the look-ahead arrives.
    due_ns: Option<u64>,
    /// The look-ahead has arrived (it waits only for host-queue room).
    arrived: bool,
    next_seq: u64,

    warmup_requests: u64,
    window_start_ns: Option<u64>,
    last_completion_ns: u64,
    requests_recorder: RequestRecorder,
    host_queue_recorder: HostQueueRecorder,
    host_queue_max: u64,
    input_end: Option<(u64, u64)>,
    lag_sum_ns: u128,
    lag_max_ns: u64,
    lags: u64,
    dispatch_log: Option<DispatchLog>,

    engine: Engine<Tag>,
    pool: BufferPool,
    done: Vec<Done<Tag>>,
    versions: Option<Versions>,
    write_version: u64,
    ios_submitted: u64,
}

macro_rules! view {
    ($r:ident, $now:expr) => {
        HostView {
            now_ns: $now,
            geometry: &$r.geometry,
            static_map: &$r.static_map,
            outstanding_per_chip: &$r.chip_load.outstanding,
            outstanding: $r.outstanding_requests,
            device_free_slots: $r.depth - $r.outstanding_commands,
        }
    };
}

impl Replayer {
    fn new(
        spec: &ReplaySpec,
        target: &Target,
        engine: Engine<Tag>,
        pool: BufferPool,
        total_records: u64,
    ) -> Replayer {
        let config = &spec.run.config;
        let g = config.geometry.clone();
        Replayer {
            started: Instant::now(),
            path: target.path.clone(),
            host: config.host.scheduler.build(),
            bound: QueueBound::new(&config.host),
            chip_load: ChipLoad::new(g.chips() as usize),
            static_map: config.static_map(),
            page_bytes: u64::from(g.page_bytes),
            geometry: g,
            pacing: Pacing::new(spec.run.replay, spec.run.max_requests),
            depth: config.device.queue_depth_requests.max(1),
            total_records,
            requests: Vec::new(),
            free_requests: Vec::new(),
            live_requests: 0,
            outstanding_requests: 0,
            commands: Vec::new(),
            free_commands: Vec::new(),
            outstanding_commands: 0,
            pop_buffer: Vec::new(),
            lookahead: None,
            due_ns: None,
            arrived: false,
            next_seq: 0,
            warmup_requests: spec.run.warmup_requests,
            window_start_ns: None,
            last_completion_ns: 0,
            requests_recorder: RequestRecorder::new(spec.run.traces.len()),
            host_queue_recorder: HostQueueRecorder::new(u64::from(
                config.host.queue_length_requests,
            )),
            host_queue_max: 0,
            input_end: None,
            lag_sum_ns: 0,
            lag_max_ns: 0,
            lags: 0,
            dispatch_log: spec.dispatch_log.then(DispatchLog::default),
            engine,
            pool,
            done: Vec::new(),
            versions: spec
                .verify
                .then(|| Versions::new(matches!(target.plan, Plan::Create { .. }))),
            write_version: 0,
            ios_submitted: 0,
        }
    }

    fn now(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    fn target_error(&self, e: impl std::fmt::Display) -> Error {
        Error::Target(format!("{}: {e}", self.path.display()))
    }

    fn run(
        &mut self,
        source: &mut Source,
        progress: &mut dyn FnMut(ReplayProgress),
    ) -> Result<(), Error> {
        self.started = Instant::now();
        let mut next = || source.next();
        self.fetch_next(0, &mut next)?;
        let mut reported = 0;
        loop {
            let now = self.now();
            self.admit_due(now, &mut next)?;
            self.dispatch(now)?;
            if self.lookahead.is_none() && self.live_requests == 0 {
                break;
            }
            // Wait for a completion, or until the next arrival or scheduler timer is due.
            let now = self.now();
            let mut due = if self.arrived { None } else { self.due_ns };
            if let Some(wake) = self.host.wake_at_ns() {
                let wake = wake.max(now + 1);
                due = Some(due.map_or(wake, |d| d.min(wake)));
            }
            if self.engine.in_flight() == 0 && due.is_none() {
                return Err(Error::Workload(format!(
                    "internal error: {} requests never completed (host scheduler held them \
                     with no timer set)",
                    self.live_requests
                )));
            }
            let timeout = due.map(|d| Duration::from_nanos(d.saturating_sub(now)));
            self.engine
                .wait(timeout)
                .map_err(|e| self.target_error(e))?;
            self.reap()?;
            if self.pacing.records() >= reported + PROGRESS_RECORDS {
                reported = self.pacing.records();
                progress(ReplayProgress::Replaying {
                    records: reported,
                    total_records: self.total_records,
                });
            }
        }
        Ok(())
    }

    fn fetch_next(
        &mut self,
        now: u64,
        next: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        self.lookahead = None;
        self.arrived = false;
        self.due_ns = None;
        let Some(arrival) = self.pacing.next(next)? else {
            if self.input_end.is_none() {
                self.input_end = Some((now, self.live_requests));
            }
            return Ok(());
        };
        match self.pacing.arrival_ns(&arrival) {
            Some(at) => self.due_ns = Some(at),
            None => self.arrived = true,
        }
        self.lookahead = Some(arrival);
        Ok(())
    }

    /// Admit the look-ahead (and those after it) while it has arrived and there is room.
    fn admit_due(
        &mut self,
        now: u64,
        next: &mut dyn FnMut() -> Result<Option<Arrival>, Error>,
    ) -> Result<(), Error> {
        while self.lookahead.is_some() {
            if !self.arrived {
                match self.due_ns {
                    Some(at) if at <= now => {
                        self.arrived = true;
                        let lag = now - at;
                        self.lag_sum_ns += u128::from(lag);
                        self.lag_max_ns = self.lag_max_ns.max(lag);
                        self.lags += 1;
                    }
                    _ => break,
                }
            }
            let room = self
                .bound
                .has_room(self.host.len(), self.outstanding_requests);
            if !self.pacing.admits(room, self.live_requests) {
                break;
            }
            self.admit(now)?;
            self.fetch_next(now, next)?;
        }
        Ok(())
    }

    fn admit(&mut self, now: u64) -> Result<(), Error> {
        let Some(Arrival { record, source, .. }) = self.lookahead.take() else {
            return Ok(());
        };
        self.arrived = false;
        let arrival_ns = self.pacing.admitted_arrival_ns(now);
        let seq = self.next_seq;
        self.next_seq += 1;
        if seq == self.warmup_requests && self.window_start_ns.is_none() {
            self.window_start_ns = Some(arrival_ns);
            self.host_queue_recorder.start_window(arrival_ns);
        }
        let (first_lpn, pages) = page_span(record.offset_bytes, record.size_bytes, self.page_bytes);
        let pages = u32::try_from(pages)
            .map_err(|_| Error::Workload(format!("trace record {} is too large", seq + 1)))?;
        let chips = self.static_map.chips_of_range(first_lpn, u64::from(pages));
        let placeholder = Live {
            host: HostRequest::new(0, 0, 0, &record, (0, 0), chips),
            marks: RequestMarks::default(),
        };
        let id = match self.free_requests.pop() {
            Some(id) => id,
            None => {
                self.requests.push(placeholder);
                (self.requests.len() - 1) as RequestId
            }
        };
        let host = HostRequest::new(id, seq, arrival_ns, &record, (first_lpn, pages), chips);
        self.chip_load.admitted(chips);
        self.live_requests += 1;
        let view = view!(self, now);
        self.host.push(host, &view);
        self.host_queue_max = self.host_queue_max.max(self.host.len() as u64);
        self.requests[id as usize] = Live {
            host,
            marks: RequestMarks::new(source, seq >= self.warmup_requests),
        };
        self.host_queue_changed(now);
        Ok(())
    }

    fn host_queue_changed(&mut self, now: u64) {
        let len = self
            .bound
            .occupancy(self.host.len(), self.outstanding_requests);
        self.host_queue_recorder.length(now, len as u64);
    }

    /// Hand what the scheduler pops to the drive while it has room.
    fn dispatch(&mut self, now: u64) -> Result<(), Error> {
        while self.outstanding_commands < self.depth && !self.host.is_empty() {
            self.pop_buffer.clear();
            let view = view!(self, now);
            self.host.pop(&view, &mut self.pop_buffer);
            if self.pop_buffer.is_empty() {
                break;
            }
            if let Some(log) = &mut self.dispatch_log {
                let requests = &self.requests;
                log.command(
                    now,
                    self.pop_buffer
                        .iter()
                        .map(|&id| &requests[id as usize].host),
                );
            }
            let command = match self.free_commands.pop() {
                Some(c) => c,
                None => {
                    self.commands.push(Command::default());
                    (self.commands.len() - 1) as u32
                }
            };
            self.outstanding_commands += 1;
            let mut members = std::mem::take(&mut self.commands[command as usize].members);
            members.clear();
            members.extend_from_slice(&self.pop_buffer);
            for &id in &members {
                let live = &mut self.requests[id as usize];
                live.marks.dispatched_at(now);
                self.chip_load.dispatched(live.host.chips);
                self.outstanding_requests += 1;
            }
            // Contiguous requests of one direction (a merge) go as one I/O.
            let mut extents: Vec<(u64, u64, Op)> = members
                .iter()
                .map(|&id| {
                    let h = &self.requests[id as usize].host;
                    (h.offset_bytes, h.offset_bytes + h.size_bytes, h.op)
                })
                .collect();
            extents.sort_unstable_by_key(|e| e.0);
            let mut runs: Vec<(u64, u64, Op)> = Vec::with_capacity(extents.len());
            for e in extents {
                match runs.last_mut() {
                    Some(last) if last.1 == e.0 && last.2 == e.2 => last.1 = e.1,
                    _ => runs.push(e),
                }
            }
            self.commands[command as usize] = Command {
                members,
                pending_ios: runs.len() as u32,
            };
            for (start, end, op) in runs {
                self.submit_io(command, start, end, op)?;
            }
            self.host_queue_changed(now);
        }
        Ok(())
    }

    fn submit_io(&mut self, command: u32, start: u64, end: u64, op: Op) -> Result<(), Error> {
        let len = (end - start) as usize;
        let first_block = start / BLOCK_BYTES;
        let blocks = (end - start) / BLOCK_BYTES;
        let mut buf = self.pool.take(len);
        let (direction, snapshot) = match op {
            Op::Write => {
                self.write_version += 1;
                verify::fill(buf.as_mut_slice(), first_block, self.write_version);
                if let Some(v) = &mut self.versions {
                    v.write_submitted(first_block, blocks, self.write_version);
                }
                (Direction::Write, None)
            }
            Op::Read => (
                Direction::Read,
                self.versions
                    .as_ref()
                    .map(|v| v.read_submitted(first_block, blocks)),
            ),
        };
        self.ios_submitted += 1;
        self.engine
            .push(Io {
                direction,
                offset_bytes: start,
                buf,
                tag: Tag::Request {
                    command,
                    first_block,
                    blocks,
                    snapshot,
                },
            })
            .map_err(|e| self.target_error(e))
    }

    fn reap(&mut self) -> Result<(), Error> {
        self.engine.reap(&mut self.done);
        if self.done.is_empty() {
            return Ok(());
        }
        let now = self.now();
        let mut done = std::mem::take(&mut self.done);
        for d in done.drain(..) {
            finished(&self.path, &d)?;
            let Done { io, .. } = d;
            if let Tag::Request {
                command,
                first_block,
                blocks,
                snapshot,
            } = &io.tag
            {
                if let Some(v) = &mut self.versions {
                    match io.direction {
                        Direction::Write => v.write_completed(*first_block, *blocks),
                        Direction::Read => v.read_completed(
                            *first_block,
                            io.buf.as_slice(),
                            snapshot
                                .as_ref()
                                .expect("a verified read keeps its snapshot"),
                        ),
                    }
                }
                let command = *command;
                self.pool.give(io.buf);
                let c = &mut self.commands[command as usize];
                c.pending_ios -= 1;
                if c.pending_ios == 0 {
                    self.complete_command(command, now);
                }
            }
        }
        self.done = done;
        Ok(())
    }

    /// Every I/O of `command` is done: its requests complete, in the order they were popped.
    fn complete_command(&mut self, command: u32, now: u64) {
        let members = std::mem::take(&mut self.commands[command as usize].members);
        for (i, &id) in members.iter().enumerate() {
            let Live { host, marks } = self.requests[id as usize];
            self.live_requests -= 1;
            self.requests_recorder
                .completed(now, marks, host.op, host.arrival_ns, host.size_bytes);
            self.last_completion_ns = now;
            self.chip_load.completed(host.chips);
            self.outstanding_requests -= 1;
            if self.bound.includes_outstanding() {
                self.host_queue_changed(now);
            }
            // As in the simulator: the device slot frees with its last request.
            if i + 1 == members.len() {
                self.outstanding_commands -= 1;
            }
            let view = view!(self, now);
            self.host.complete(&host, &view);
            self.free_requests.push(id);
        }
        self.commands[command as usize].members = members;
        self.free_commands.push(command);
    }

    fn summary(
        &self,
        spec: &ReplaySpec,
        source: &Source,
        info: target::TargetInfo,
        fill_bytes: u64,
        times: ReplayEngineTimes,
    ) -> ReplaySummary {
        let config = &spec.run.config;
        let end = self.last_completion_ns;
        let start = self.window_start_ns.unwrap_or(end).min(end);
        let window = end - start;
        let completed = self.requests_recorder.counts().completed;
        let reports = source.inputs.reports();
        let notes = source.inputs.notes();
        let shape = RunShape {
            host_queue_max: self.host_queue_max,
            last_arrival_ns: self.pacing.last_arrival_ns(),
            window_start_ns: start,
            window_end_ns: end,
            input_end: self.input_end,
        };
        let warnings = warnings(&WarningInputs {
            replay: spec.run.replay,
            warmup_requests: spec.run.warmup_requests,
            device_filter: spec.run.traces.iter().find_map(|t| t.device),
            backstep_tolerance_ns: spec.run.traces[0].options.backstep_tolerance_ns,
            host_queue_length: u64::from(config.host.queue_length_requests),
            host_scheduler_reorders: config.host.scheduler.name() != "noop",
            reports: &reports,
            notes: &notes,
            records: self.pacing.records(),
            completed,
            shape,
        });
        let sources = reports
            .iter()
            .zip(self.requests_recorder.per_source())
            .map(|(report, (requests, latency_us))| SourceSummary {
                input: report.clone(),
                requests,
                latency_us,
            })
            .collect();
        let primary = &reports[0];
        ReplaySummary {
            schema_version: REPLAY_SCHEMA_VERSION,
            config: ReplayConfig {
                name: config.name.clone(),
                host: config.host.clone(),
                device: QueueDepth {
                    queue_depth_requests: self.depth,
                },
            },
            trace: TraceSummary {
                path: primary.path.clone(),
                format: primary.format.clone(),
                records: self.pacing.records(),
                bad_lines: reports.iter().map(|r| r.bad_lines).sum(),
            },
            warnings,
            run: RunOptions {
                warmup_requests: spec.run.warmup_requests,
                max_requests: spec.run.max_requests,
                replay: spec.run.replay,
                addresses: spec.run.addresses,
            },
            figures: RequestFigures::from_recorders(
                &self.requests_recorder,
                &self.host_queue_recorder,
                window,
                end,
            ),
            window_ns: window,
            host_scheduler: NamedReport {
                name: config.host.scheduler.name().to_string(),
                report: self.host.report(),
            },
            device: RealDevice {
                target: info,
                assumed_chip_layout: assumed_layout(config),
            },
            replay: ReplayFacts {
                reads_only: spec.target.reads_only,
                writes_left_out: source.writes_left_out,
                realigned_requests: source.realigned,
                fill_bytes,
                arrival_lag_us: (matches!(spec.run.replay, Replay::OpenLoop { .. })
                    && self.lags > 0)
                    .then(|| Lag {
                        mean: self.lag_sum_ns as f64 / self.lags as f64 / 1000.0,
                        max: self.lag_max_ns as f64 / 1000.0,
                    }),
                verify: self.versions.as_ref().map(|v| VerifyStats {
                    checked_blocks: v.checked_blocks,
                    mismatched_blocks: v.mismatched_blocks,
                }),
            },
            sources,
            engine: ReplayEngine {
                io_engine: "io_uring",
                ios_submitted: self.ios_submitted,
                wall_s: times.wall_s,
                fill_wall_s: times.fill_wall_s,
            },
        }
    }
}
