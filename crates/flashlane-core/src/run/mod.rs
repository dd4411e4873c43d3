//! One simulation run from inputs to summary: the function the CLI and Python both call.

mod drive;
mod input;
mod memory;
mod precondition_cache;
mod spill;

use std::path::PathBuf;
use std::time::Instant;

use crate::config::Config;
use crate::ftl::{Footprint, FootprintRequests, PartialPages};
use crate::host::HostScheduler;
use crate::interconnect::Interconnect;
use crate::sim::{SimOptions, Simulation};
use crate::stats::{
    energy_stats, warnings, DispatchLog, EngineStats, MemoryStats, NamedReport, RunOptions,
    SourceSummary, Summary, TraceSummary, WarningInputs, SCHEMA_VERSION,
};
use crate::trace::{Op, TraceFormat};
use crate::Error;

pub use crate::replay::{AddressPolicy, Arrival, Pacing, Replay, SourceReport};
pub use drive::{DriveInputs, VariationInputs};
pub use input::{Inputs, TraceInput};
pub use memory::{check_parallel_memory, upfront_memory, MemoryEstimate, MAX_UPFRONT_BYTES};
pub use precondition_cache::{
    remove_snapshot_temporaries, FORMAT_VERSION as SNAPSHOT_FORMAT_VERSION,
};

/// Everything one run needs.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub config: Config,
    /// The traces to replay; more than one makes a mix, each trace in its own equal share of
    /// the logical space.
    pub traces: Vec<TraceInput>,
    pub replay: Replay,
    pub addresses: AddressPolicy,
    pub warmup_requests: u64,
    pub max_requests: Option<u64>,
    pub seed: u64,
    /// Keep shadow versions of every page and count reads that miss the latest write.
    pub check_integrity: bool,
    /// Directory of drive snapshots (run/precondition_cache.rs): the drive is loaded from
    /// its snapshot there, or preconditioned and its snapshot written. `None`: preconditioned,
    /// nothing kept.
    pub precondition_cache: Option<PathBuf>,
}

impl RunSpec {
    /// One trace, open-loop replay at trace speed, strict addresses, seed 1.
    pub fn new(
        config: Config,
        trace_path: impl Into<PathBuf>,
        format: Option<TraceFormat>,
    ) -> Self {
        RunSpec {
            config,
            traces: vec![TraceInput::new(trace_path, format)],
            replay: Replay::default(),
            addresses: AddressPolicy::Strict,
            warmup_requests: 0,
            max_requests: None,
            seed: 1,
            check_integrity: false,
            precondition_cache: None,
        }
    }

    fn open_inputs(&self, logical_bytes: u64) -> Result<Inputs, Error> {
        Inputs::open(
            &self.traces,
            self.addresses,
            self.replay,
            logical_bytes,
            self.config.geometry.page_bytes as u64,
        )
    }

    fn validate(&self) -> Result<(), Error> {
        self.config.validate().map_err(Error::Config)?;
        // Before anything is allocated.
        memory::check_memory(self)?;
        self.replay.validate()?;
        if self.traces.len() > u16::MAX as usize {
            return Err(Error::Config("too many traces in one mix".into()));
        }
        if let Some(dir) = self
            .precondition_cache
            .as_ref()
            .filter(|dir| dir.exists() && !dir.is_dir())
        {
            return Err(Error::Config(format!(
                "--precondition-cache {}: not a directory",
                dir.display()
            )));
        }
        Ok(())
    }
}

/// Which part of a run a [`Progress`] report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The pass over the trace that collects the pages to precondition.
    FootprintPass,
    /// The simulation proper.
    Simulation,
}

/// A progress report: `records` trace records read so far in `phase`, out of
/// `total_records` when known (the footprint pass counts them for the simulation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub records: u64,
    pub total_records: Option<u64>,
}

/// Records between two progress reports of the footprint pass.
const FOOTPRINT_PROGRESS_RECORDS: u64 = 1 << 18;

/// What the footprint pass found: the pages to precondition, the number of arrivals, the
/// inputs rewound for the simulation, and (for read-modify-write under
/// `precondition.footprint_requests = "reads"`) the sectors of partly read pages.
struct FootprintPass {
    footprint: Footprint,
    records: u64,
    inputs: Inputs,
    partial_sectors: Vec<(u64, u32)>,
}

/// The logical pages the first `max_requests` arrivals touch (a streaming pass), how many
/// arrivals that is, and the inputs rewound for the simulation (replaying a binary copy of the
/// records read here, so the trace text is parsed once). Under
/// `precondition.footprint_requests = "reads"` only reads count.
fn trace_footprint(
    spec: &RunSpec,
    logical_pages: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<FootprintPass, Error> {
    let page = spec.config.geometry.page_bytes as u64;
    let mut inputs = Inputs::open_recording(
        &spec.traces,
        spec.addresses,
        spec.replay,
        logical_pages * page,
        page,
    )?;
    let mut footprint = Footprint::new(logical_pages);
    let reads_only = spec.config.precondition.footprint_requests == FootprintRequests::Reads;
    // SSDsim's pre_process_page marks the sectors read; kept only where read-modify-write
    // can tell a partly held page from a whole one.
    let sectors = (reads_only && spec.config.ftl.partial_page_writes.reads_first())
        .then(|| PartialPages::new(page as u32))
        .flatten();
    let mut partial_sectors = Vec::new();
    let mut n = 0u64;
    let mut pending: Option<(u64, u64)> = None;
    let mark = |footprint: &mut Footprint, first: u64, last: u64| {
        for lpn in first..=last {
            // Inputs already refused addresses past the capacity.
            footprint.insert(lpn);
        }
    };
    let report = |records| Progress {
        phase: Phase::FootprintPass,
        records,
        total_records: None,
    };
    while let Some(Arrival { record, .. }) = inputs.next_arrival()? {
        if spec.max_requests.is_some_and(|max| n >= max) {
            break;
        }
        n += 1;
        if n.is_multiple_of(FOOTPRINT_PROGRESS_RECORDS) {
            progress(report(n));
        }
        if reads_only && record.op != Op::Read {
            continue;
        }
        let first = record.offset_bytes / page;
        let last = (record.offset_bytes + record.size_bytes - 1) / page;
        if let Some(sectors) = &sectors {
            let end = record.offset_bytes + record.size_bytes;
            for lpn in [first, last] {
                let read = sectors.sectors(lpn, record.offset_bytes, end);
                if !sectors.is_whole(read) {
                    partial_sectors.push((lpn, read));
                }
            }
        }
        // A random page's bit is a cache miss: mark each record's pages while the next record
        // is parsed, its bit prefetched now.
        footprint.prefetch(first);
        if let Some((first, last)) = pending.replace((first, last)) {
            mark(&mut footprint, first, last);
        }
    }
    if let Some((first, last)) = pending {
        mark(&mut footprint, first, last);
    }
    progress(report(n));
    Ok(FootprintPass {
        footprint,
        records: n,
        inputs: inputs.rewind()?,
        partial_sectors,
    })
}

/// Run one simulation. `progress` is called now and then with where the run is.
pub fn run_with_progress(
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
) -> Result<Summary, Error> {
    run_checked(spec, progress, &|| false, false, false).map(|(summary, _)| summary)
}

/// As [`run_with_progress`], also keeping the order in which the host scheduler handed
/// requests to the device (`flashlane run --dispatch-log`).
pub fn run_with_dispatch_log(
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Summary, DispatchLog), Error> {
    let (summary, log) = run_checked(spec, progress, &|| false, false, true)?;
    Ok((summary, log.unwrap_or_default()))
}

/// As [`run_with_progress`], asking `interrupted` now and then during the simulation (every
/// 65,536 events): when it answers true the run stops with [`Error::Interrupted`]. The Python
/// bindings use it to honour Ctrl-C during a long run.
pub fn run_interruptible(
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
    interrupted: &dyn Fn() -> bool,
) -> Result<Summary, Error> {
    run_checked(spec, progress, interrupted, false, false).map(|(summary, _)| summary)
}

/// As [`run_interruptible`], also keeping the hand-over order when `dispatch_log` is true (the
/// Python bindings' `dispatch_log_path`).
pub fn run_interruptible_logging(
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
    interrupted: &dyn Fn() -> bool,
    dispatch_log: bool,
) -> Result<(Summary, Option<DispatchLog>), Error> {
    run_checked(spec, progress, interrupted, false, dispatch_log)
}

/// Test hook: run with a write buffer that forgets rewrites of pages being flushed, so
/// `--check-integrity` must count violations (shows the check can fail).
#[doc(hidden)]
pub fn run_losing_buffer_rewrites_for_test(spec: &RunSpec) -> Result<Summary, Error> {
    run_checked(spec, &mut |_: Progress| {}, &|| false, true, false).map(|(summary, _)| summary)
}

fn run_checked(
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
    interrupted: &dyn Fn() -> bool,
    lose_buffer_rewrites: bool,
    dispatch_log: bool,
) -> Result<(Summary, Option<DispatchLog>), Error> {
    spec.validate()?;
    let config = &spec.config;
    let drive = DriveInputs::of(config, spec.seed, spec.check_integrity);
    let mut ftl = drive.build()?;
    let logical_bytes = ftl.logical_pages() * config.geometry.page_bytes as u64;
    let (footprint, total_records, rewound, partial_sectors) =
        if config.precondition.write_trace_footprint {
            let pass = trace_footprint(spec, ftl.logical_pages(), progress)?;
            (
                Some(pass.footprint),
                Some(pass.records),
                Some(pass.inputs),
                pass.partial_sectors,
            )
        } else {
            (None, None, None, Vec::new())
        };
    let precondition_report = match &spec.precondition_cache {
        Some(dir) => {
            precondition_cache::precondition_cached(dir, &drive, &mut ftl, footprint.as_ref())?
        }
        None => drive.precondition(&mut ftl, footprint.as_ref())?,
    };
    drop(footprint);
    ftl.start_block_choice();

    let mut inputs = match rewound {
        Some(inputs) => inputs,
        None => spec.open_inputs(logical_bytes)?,
    };
    let mut sim = Simulation::new(
        config,
        ftl,
        SimOptions {
            warmup_requests: spec.warmup_requests,
            max_requests: spec.max_requests,
            replay: spec.replay,
            sources: spec.traces.len(),
            dispatch_log,
        },
    );
    if lose_buffer_rewrites {
        sim.lose_buffer_rewrites_for_test();
    }
    sim.preload_sectors(partial_sectors.into_iter());
    // The simulation phase starts now, not at its first periodic report: a display measures
    // its rate from here (after a long preconditioning, not from a moment ago).
    progress(Progress {
        phase: Phase::Simulation,
        records: 0,
        total_records,
    });
    let started = Instant::now();
    sim.run(&mut || inputs.next_arrival(), &mut |records| {
        progress(Progress {
            phase: Phase::Simulation,
            records,
            total_records,
        });
        !interrupted()
    })?;
    let wall_s = started.elapsed().as_secs_f64();
    let results = sim.results();
    let dispatch_log = sim.take_dispatch_log();
    let reports = inputs.reports();
    let sources: Vec<SourceSummary> = reports
        .iter()
        .zip(results.per_source.iter())
        .map(|(report, stats)| SourceSummary {
            input: report.clone(),
            requests: stats.0.clone(),
            latency_us: stats.1.clone(),
        })
        .collect();
    let notes = inputs.notes();
    let warnings = warnings(&WarningInputs {
        replay: spec.replay,
        warmup_requests: spec.warmup_requests,
        device_filter: spec.traces.iter().find_map(|t| t.device),
        backstep_tolerance_ns: spec.traces[0].options.backstep_tolerance_ns,
        host_queue_length: u64::from(config.host.queue_length_requests),
        host_scheduler_reorders: config.host.scheduler.name() != "noop",
        reports: &reports,
        notes: &notes,
        records: results.records,
        completed: results.figures.requests.completed,
        shape: results.shape,
    });
    let primary = &reports[0];
    let interconnect_report = sim.interconnect.report();
    let energy = energy_stats(
        config,
        &results.flash,
        &interconnect_report,
        results.sim_time_ns,
        results.figures.requests.completed,
    );
    let summary = Summary {
        schema_version: SCHEMA_VERSION,
        seed: spec.seed,
        config: config.clone(),
        trace: TraceSummary {
            path: primary.path.clone(),
            format: primary.format.clone(),
            records: results.records,
            bad_lines: reports.iter().map(|r| r.bad_lines).sum(),
        },
        warnings,
        run: RunOptions {
            warmup_requests: spec.warmup_requests,
            max_requests: spec.max_requests,
            replay: spec.replay,
            addresses: spec.addresses,
        },
        figures: results.figures,
        sim_time_ns: results.sim_time_ns,
        chips: results.chips,
        conflicts: results.conflicts,
        flash: results.flash,
        gc: results.gc,
        cmt: results.cmt,
        variation: results.variation,
        waf: results.waf,
        waf_host_gc: results.waf_host_gc,
        host_scheduler: NamedReport {
            name: config.host.scheduler.name().to_string(),
            report: sim.host.report(),
        },
        device_scheduler: config.device.scheduler.name().to_string(),
        device: results.device,
        write_buffer: results.write_buffer,
        region_slowdown: results.region_slowdown,
        interconnect: NamedReport {
            name: config.interconnect.name().to_string(),
            report: interconnect_report,
        },
        energy,
        request_paths: results.request_paths,
        precondition: precondition_report,
        sources,
        memory: MemoryStats {
            mapping_bytes: sim.ftl.allocated_bytes(),
        },
        integrity_violations: sim.integrity_violations(),
        engine: EngineStats {
            events: results.events,
            wall_s,
            requests_per_s: if wall_s > 0.0 {
                results.records as f64 / wall_s
            } else {
                0.0
            },
        },
    };
    Ok((summary, dispatch_log))
}

/// Run one simulation without progress reports.
pub fn run(spec: &RunSpec) -> Result<Summary, Error> {
    run_with_progress(spec, &mut |_: Progress| {})
}
