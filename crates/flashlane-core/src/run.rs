//! One simulation run from inputs to summary: the function the CLI and Python both call.

use std::path::PathBuf;
use std::time::Instant;

use crate::config::Config;
use crate::ftl::{precondition, Footprint, Ftl};
use crate::geometry::StaticMap;
use crate::host::HostScheduler;
use crate::interconnect::Interconnect;
use crate::sim::{SimOptions, Simulation};
use crate::stats::{
    EngineStats, MemoryStats, NamedReport, RunOptions, Summary, TraceSummary, SCHEMA_VERSION,
};
use crate::trace::{self, TraceFormat, TraceRecord};
use crate::Error;

/// Everything one run needs.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub config: Config,
    pub trace_path: PathBuf,
    /// Trace layout; `None` = detect from content.
    pub trace_format: Option<TraceFormat>,
    pub warmup_requests: u64,
    pub max_requests: Option<u64>,
    pub seed: u64,
    /// Keep shadow versions of every page and count reads that miss the latest write.
    pub check_integrity: bool,
}

/// Open the trace of `spec` as a record stream.
fn open_trace(spec: &RunSpec) -> Result<(TraceFormat, Box<dyn trace::TraceReader>), Error> {
    let format = match spec.trace_format {
        Some(f) => f,
        None => trace::detect(&spec.trace_path)?,
    };
    Ok((format, trace::open(&spec.trace_path, format)?))
}

/// The logical pages the first `max_requests` records touch (a streaming pass over the trace).
fn trace_footprint(spec: &RunSpec, logical_pages: u64) -> Result<Footprint, Error> {
    let (_, mut reader) = open_trace(spec)?;
    let page = spec.config.geometry.page_bytes as u64;
    let mut footprint = Footprint::new(logical_pages);
    let mut n = 0u64;
    while let Some(record) = reader.next_record()? {
        if spec.max_requests.is_some_and(|max| n >= max) {
            break;
        }
        n += 1;
        let first = record.offset_bytes / page;
        let last = (record.offset_bytes + record.size_bytes - 1) / page;
        for lpn in first..=last {
            if !footprint.insert(lpn) {
                return Err(Error::Workload(format!(
                    "{}: record {n} reaches byte {} past the simulated capacity of {} bytes",
                    spec.trace_path.display(),
                    record.offset_bytes + record.size_bytes,
                    logical_pages * page
                )));
            }
        }
    }
    Ok(footprint)
}

/// Run one simulation. `progress` is called now and then with the records read so far.
pub fn run_with_progress(spec: &RunSpec, progress: &mut dyn FnMut(u64)) -> Result<Summary, Error> {
    let config = &spec.config;
    config.validate().map_err(Error::Config)?;
    let static_map = StaticMap::new(&config.geometry, config.static_order());
    let mut ftl = Ftl::new(
        &config.geometry,
        &config.ftl,
        static_map,
        spec.check_integrity,
    );
    let footprint = if config.precondition.write_trace_footprint {
        Some(trace_footprint(spec, ftl.logical_pages())?)
    } else {
        None
    };
    let precondition_report = precondition(
        &mut ftl,
        &config.precondition,
        footprint.as_ref(),
        spec.seed,
    )?;
    drop(footprint);

    let (format, mut reader) = open_trace(spec)?;
    let mut sim = Simulation::new(
        config,
        ftl,
        SimOptions {
            warmup_requests: spec.warmup_requests,
            max_requests: spec.max_requests,
        },
    );
    let started = Instant::now();
    let mut next_record = || -> Result<Option<TraceRecord>, Error> { Ok(reader.next_record()?) };
    sim.run(&mut next_record, progress)?;
    let wall_s = started.elapsed().as_secs_f64();
    let results = sim.results();
    Ok(Summary {
        schema_version: SCHEMA_VERSION,
        seed: spec.seed,
        config: config.clone(),
        trace: TraceSummary {
            path: spec.trace_path.display().to_string(),
            format: format.name().to_string(),
            records: results.records,
        },
        run: RunOptions {
            warmup_requests: spec.warmup_requests,
            max_requests: spec.max_requests,
        },
        requests: results.requests,
        latency_us: results.latency_us,
        time_split_us: results.time_split_us,
        throughput: results.throughput,
        sim_time_ns: results.sim_time_ns,
        chips: results.chips,
        conflicts: results.conflicts,
        flash: results.flash,
        gc: results.gc,
        waf: results.waf,
        host_scheduler: NamedReport {
            name: config.host.scheduler.name().to_string(),
            report: sim.host.report(),
        },
        device_scheduler: config.device.scheduler.name().to_string(),
        interconnect: NamedReport {
            name: config.interconnect.name().to_string(),
            report: sim.interconnect.report(),
        },
        precondition: precondition_report,
        memory: MemoryStats {
            mapping_bytes: sim.ftl.allocated_bytes(),
        },
        integrity_violations: sim.ftl.integrity_violations(),
        engine: EngineStats {
            events: results.events,
            wall_s,
            requests_per_s: if wall_s > 0.0 {
                results.records as f64 / wall_s
            } else {
                0.0
            },
        },
    })
}

/// Run one simulation without progress reports.
pub fn run(spec: &RunSpec) -> Result<Summary, Error> {
    run_with_progress(spec, &mut |_| {})
}
