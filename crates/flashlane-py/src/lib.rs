//! `flashlane._native`: the Python face of flashlane-core.
//!
//! Only conversion lives here: Python arguments become a [`RunSpec`] exactly the way the
//! `flashlane run` command builds one, and the core's [`flashlane_core::stats::Summary`] comes
//! back as the same JSON text `flashlane run --json` writes. The simulation runs with the GIL
//! released.

use std::path::PathBuf;

use flashlane_core::config::switches::{settings_of, Slot, COMBINED_SWITCHES};
use flashlane_core::config::{parse_override, Config, PRESETS};
use flashlane_core::run::{run_interruptible_logging, AddressPolicy, Progress, Replay, TraceInput};
use flashlane_core::trace::{
    self, BlockEvent, GenericCsvSpec, Op, ReaderOptions, TraceFormat, TraceReader,
};
use flashlane_core::workload::{self, ArrivalSpec, SyntheticSpec};
use flashlane_core::{Error, RunSpec};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

/// Map a core error to the Python exception the package documents.
fn to_py_err(error: Error) -> PyErr {
    match error {
        Error::Output { .. } => PyOSError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// The text `--set KEY=VALUE` would carry for one override value.
fn override_text(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    // bool before int: a Python bool is an int.
    if value.is_instance_of::<PyBool>() {
        let flag: bool = value.extract()?;
        Ok(flag.to_string())
    } else if value.is_instance_of::<PyInt>() {
        Ok(value.str()?.to_string())
    } else if value.is_instance_of::<PyFloat>() {
        let number: f64 = value.extract()?;
        // TOML spellings; `{:?}` keeps a decimal point (1.0, not 1) so the value stays a float.
        Ok(if number.is_nan() {
            "nan".to_string()
        } else if number.is_infinite() {
            if number > 0.0 { "inf" } else { "-inf" }.to_string()
        } else {
            format!("{number:?}")
        })
    } else if value.is_instance_of::<PyString>() {
        value.extract()
    } else {
        Err(PyTypeError::new_err(format!(
            "override `{key}`: value must be str, int, float or bool, not {}",
            value.get_type().name()?
        )))
    }
}

/// Run one simulation and return its summary as JSON text (the layout of `flashlane run --json`;
/// `pretty` gives the very text that command writes, less its final newline).
/// The inputs are traces, synthetic workloads, or both (a mix, as on the command line):
/// `traces` in order, each read in `formats[i]` (or the one format given for all, or detected
/// when none is), then `workloads_json`, a JSON array whose items are profile names (strings,
/// as `--profile`), specs (objects with the keys of a `--synthetic` TOML file) or
/// `{"spec_file": PATH}` (`--synthetic PATH`). Reading as `--max-bad-lines`,
/// `--queue-events`, `--csv-columns` and `--device`; replay and address policy as
/// `--time-scale`, `--closed-loop`, `--afap`, `--fold-addresses` / `--remap-addresses`;
/// `precondition_cache` as `--precondition-cache`; with `dispatch_log`, the hand-over order as
/// the CSV text of `--dispatch-log` is returned beside the summary (else None).
#[pyfunction]
#[pyo3(signature = (
    preset, config, traces, formats, overrides, warmup_requests, max_requests, seed,
    check_integrity, workloads_json=None, time_scale=1.0,
    closed_loop_requests=None, as_fast_as_possible=false, addresses="strict",
    max_bad_lines=0, queue_events=false, csv_columns=None, device=None, pretty=false,
    precondition_cache=None, dispatch_log=false
))]
#[allow(clippy::too_many_arguments)]
fn run_json(
    py: Python<'_>,
    preset: Option<String>,
    config: Option<PathBuf>,
    traces: Vec<PathBuf>,
    formats: Vec<String>,
    overrides: &Bound<'_, PyDict>,
    warmup_requests: u64,
    max_requests: Option<u64>,
    seed: u64,
    check_integrity: bool,
    workloads_json: Option<String>,
    time_scale: f64,
    closed_loop_requests: Option<u32>,
    as_fast_as_possible: bool,
    addresses: &str,
    max_bad_lines: u64,
    queue_events: bool,
    csv_columns: Option<String>,
    device: Option<u32>,
    pretty: bool,
    precondition_cache: Option<PathBuf>,
    dispatch_log: bool,
) -> PyResult<(String, Option<String>)> {
    let config = build_config(preset, config, overrides)?;
    let formats = formats
        .iter()
        .map(|name| parse_format(name))
        .collect::<PyResult<Vec<_>>>()?;
    if formats.len() > 1 && formats.len() != traces.len() {
        return Err(PyValueError::new_err(format!(
            "format: {} layouts for {} traces; give one for all or one per trace",
            formats.len(),
            traces.len()
        )));
    }
    // A pipe read by one trace is empty for the next: refuse rather than replay nothing.
    for (i, path) in traces.iter().enumerate() {
        if traces[..i].contains(path) && trace::is_stream(path) {
            return Err(PyValueError::new_err(format!(
                "trace {} given twice: it is a pipe or standard input, which can be read only \
                 once",
                path.display()
            )));
        }
    }
    let options = reader_options(max_bad_lines, queue_events, csv_columns)?;
    let synthetic = synthetic_workloads(workloads_json.as_deref())?;
    let mut inputs = Vec::with_capacity(traces.len() + synthetic.len());
    for (i, path) in traces.into_iter().enumerate() {
        let mut input = TraceInput::new(path, formats.get(i).or(formats.first()).copied());
        input.options = options.clone();
        input.device = device;
        inputs.push(input);
    }
    // A closed-loop spec asks for closed-loop replay at its depth unless the caller chose, as
    // on the command line.
    let spec_depth = synthetic.iter().find_map(|(_, spec)| match spec.arrival {
        ArrivalSpec::ClosedLoop {
            queue_depth_requests,
        } => Some(queue_depth_requests),
        _ => None,
    });
    for (name, spec) in synthetic {
        let mut input = TraceInput::synthetic(name, spec);
        input.device = device;
        inputs.push(input);
    }
    if inputs.is_empty() {
        return Err(PyValueError::new_err("give a trace, a workload, or both"));
    }
    let replay = match (closed_loop_requests, as_fast_as_possible, spec_depth) {
        (Some(outstanding), _, _) => Replay::ClosedLoop { outstanding },
        (None, true, _) => Replay::AsFastAsPossible,
        (None, false, Some(outstanding)) => Replay::ClosedLoop { outstanding },
        (None, false, None) => Replay::OpenLoop { time_scale },
    };
    let addresses = match addresses {
        "strict" => AddressPolicy::Strict,
        "fold" => AddressPolicy::Fold,
        "remap" => AddressPolicy::Remap,
        other => {
            return Err(PyValueError::new_err(format!(
                "addresses `{other}`: expected \"strict\", \"fold\" or \"remap\""
            )))
        }
    };
    let spec = RunSpec {
        config,
        traces: inputs,
        replay,
        addresses,
        warmup_requests,
        max_requests,
        seed,
        check_integrity,
        precondition_cache,
    };
    // The run releases the interpreter; every 65,536 events (and at most every 50 ms) it takes
    // it back for a moment to run Python's signal handlers, so Ctrl-C stops a long run at
    // once instead of when it ends. The handler's exception is raised in place of the result.
    let raised: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let result = py.detach(|| {
        let last = std::sync::Mutex::new(std::time::Instant::now());
        run_interruptible_logging(
            &spec,
            &mut |_: Progress| {},
            &|| {
                let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
                if last.elapsed() < std::time::Duration::from_millis(50) {
                    return false;
                }
                *last = std::time::Instant::now();
                match Python::attach(|py| py.check_signals()) {
                    Ok(()) => false,
                    Err(err) => {
                        *raised.lock().unwrap_or_else(|e| e.into_inner()) = Some(err);
                        true
                    }
                }
            },
            dispatch_log,
        )
    });
    if let Some(err) = raised.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(err);
    }
    let (summary, log) = result.map_err(to_py_err)?;
    let text = if pretty {
        serde_json::to_string_pretty(&summary)
    } else {
        serde_json::to_string(&summary)
    }
    .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let csv = match log {
        Some(log) => {
            let mut bytes = Vec::new();
            log.write_csv(&mut bytes)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Some(String::from_utf8(bytes).map_err(|e| PyValueError::new_err(e.to_string()))?)
        }
        None => None,
    };
    Ok((text, csv))
}

/// Reader settings as `--max-bad-lines`, `--queue-events` and `--csv-columns` give them.
fn reader_options(
    max_bad_lines: u64,
    queue_events: bool,
    csv_columns: Option<String>,
) -> PyResult<ReaderOptions> {
    let mut options = ReaderOptions {
        max_bad_lines,
        ..ReaderOptions::default()
    };
    if queue_events {
        options.block_event = BlockEvent::Queue;
    }
    if let Some(text) = csv_columns {
        options.generic_csv = Some(
            text.parse::<GenericCsvSpec>()
                .map_err(|e| PyValueError::new_err(format!("csv_columns {text}: {e}")))?,
        );
    }
    Ok(options)
}

/// The synthetic workloads of a JSON array of profile names and specs, each with the name it
/// is reported under (`profile NAME` as on the command line, `workload LABEL` for a spec).
fn synthetic_workloads(workloads_json: Option<&str>) -> PyResult<Vec<(String, SyntheticSpec)>> {
    let Some(text) = workloads_json else {
        return Ok(Vec::new());
    };
    let items: Vec<serde_json::Value> = serde_json::from_str(text)
        .map_err(|e| PyValueError::new_err(format!("workloads: expected a JSON array: {e}")))?;
    items
        .into_iter()
        .map(|item| match item {
            serde_json::Value::String(name) => {
                let profile = workload::profile(&name).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "workload profile `{name}`: unknown profile; `flashlane gen --list` \
                         lists them (a spec file is given as a pathlib.Path)"
                    ))
                })?;
                Ok((format!("profile {}", profile.name), profile.spec))
            }
            serde_json::Value::Object(map)
                if map.len() == 1 && map.get("spec_file").is_some_and(|v| v.is_string()) =>
            {
                let path = PathBuf::from(map["spec_file"].as_str().unwrap_or_default());
                let spec = SyntheticSpec::from_file(&path).map_err(to_py_err)?;
                // Named by its path, as `--synthetic PATH` names it.
                Ok((path.display().to_string(), spec))
            }
            spec @ serde_json::Value::Object(_) => {
                let spec: SyntheticSpec = serde_json::from_value(spec)
                    .map_err(|e| PyValueError::new_err(format!("workload spec: {e}")))?;
                spec.validate()
                    .map_err(|e| PyValueError::new_err(format!("workload spec: {e}")))?;
                Ok((format!("workload {}", spec.label), spec))
            }
            other => Err(PyValueError::new_err(format!(
                "workload {other}: expected a profile name or a spec"
            ))),
        })
        .collect()
}

/// Check synthetic workloads without running them (a JSON array of profile names and specs,
/// as `run_json` takes it); return the specs as a JSON array, or raise `ValueError` naming
/// the profile or key at fault.
#[pyfunction]
#[pyo3(signature = (workloads_json))]
fn resolve_workloads(workloads_json: &str) -> PyResult<String> {
    let specs: Vec<SyntheticSpec> = synthetic_workloads(Some(workloads_json))?
        .into_iter()
        .map(|(_, spec)| spec)
        .collect();
    serde_json::to_string(&specs).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Build a configuration without running it (a dry run of the config half of `run_json`):
/// return the resolved config as JSON text, or raise `ValueError` naming the preset, file or
/// key at fault. `flashlane.sweep` checks every grid point with it before any run starts.
#[pyfunction]
#[pyo3(signature = (preset, config, overrides))]
fn resolve_config(
    preset: Option<String>,
    config: Option<PathBuf>,
    overrides: &Bound<'_, PyDict>,
) -> PyResult<String> {
    let config = build_config(preset, config, overrides)?;
    serde_json::to_string(&config).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The config a preset or file gives with Python `overrides` applied, as `--set` would.
fn build_config(
    preset: Option<String>,
    config: Option<PathBuf>,
    overrides: &Bound<'_, PyDict>,
) -> PyResult<Config> {
    let mut pairs = Vec::with_capacity(overrides.len());
    for (key, value) in overrides.iter() {
        let key: String = key
            .extract()
            .map_err(|_| PyTypeError::new_err("override keys must be str"))?;
        let text = override_text(&key, &value)?;
        pairs.push(parse_override(&format!("{key}={text}")).map_err(to_py_err)?);
    }
    match (preset, config) {
        (Some(_), Some(_)) => Err(PyValueError::new_err(
            "give a preset or a config file, not both",
        )),
        (Some(name), None) => Config::from_preset(&name, &pairs).map_err(to_py_err),
        (None, Some(path)) => Config::from_file(&path, &pairs).map_err(to_py_err),
        (None, None) => Err(PyValueError::new_err("give a preset or a config file")),
    }
}

/// A trace opened for reading in chunks: each `next()` gives up to `chunk_rows` records as
/// columns (a dict of equal-length lists), in trace order, with the reader's own units
/// (`time_ns` on the trace's clock, byte offsets and sizes).
#[pyclass(unsendable)]
struct TraceChunks {
    reader: Box<dyn TraceReader>,
    chunk_rows: usize,
}

#[pymethods]
impl TraceChunks {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyDict>>> {
        let mut time_ns = Vec::with_capacity(self.chunk_rows);
        let mut device = Vec::with_capacity(self.chunk_rows);
        let mut stream = Vec::with_capacity(self.chunk_rows);
        let mut offset_bytes = Vec::with_capacity(self.chunk_rows);
        let mut size_bytes = Vec::with_capacity(self.chunk_rows);
        let mut op = Vec::with_capacity(self.chunk_rows);
        while time_ns.len() < self.chunk_rows {
            let Some(record) = self.reader.next_record().map_err(|e| to_py_err(e.into()))? else {
                break;
            };
            time_ns.push(record.time_ns);
            device.push(record.device);
            stream.push(record.stream);
            offset_bytes.push(record.offset_bytes);
            size_bytes.push(record.size_bytes);
            op.push(match record.op {
                Op::Read => "read",
                Op::Write => "write",
            });
        }
        if time_ns.is_empty() {
            return Ok(None);
        }
        let columns = PyDict::new(py);
        columns.set_item("time_ns", time_ns)?;
        columns.set_item("device", device)?;
        columns.set_item("stream", stream)?;
        columns.set_item("offset_bytes", offset_bytes)?;
        columns.set_item("size_bytes", size_bytes)?;
        columns.set_item("op", op)?;
        Ok(Some(columns.unbind()))
    }

    /// The layout being read (given or detected).
    #[getter]
    fn format(&self) -> &'static str {
        self.reader.format().name()
    }

    /// Malformed lines skipped so far under `max_bad_lines`.
    #[getter]
    fn bad_lines(&self) -> u64 {
        self.reader.bad_lines()
    }
}

/// Open a trace with the reader the CLI uses. `format=None` detects the layout from content.
#[pyfunction]
#[pyo3(signature = (path, format, max_bad_lines, queue_events, csv_columns, chunk_rows))]
fn open_trace(
    path: PathBuf,
    format: Option<String>,
    max_bad_lines: u64,
    queue_events: bool,
    csv_columns: Option<String>,
    chunk_rows: usize,
) -> PyResult<TraceChunks> {
    if chunk_rows == 0 {
        return Err(PyValueError::new_err("chunk_rows must be at least 1"));
    }
    let format = format.map(|name| parse_format(&name)).transpose()?;
    let options = reader_options(max_bad_lines, queue_events, csv_columns)?;
    // One open: a pipe's layout is detected on the bytes the reader then reads.
    let reader = trace::open_detected(&path, format, &options).map_err(|e| to_py_err(e.into()))?;
    Ok(TraceChunks { reader, chunk_rows })
}

fn parse_format(name: &str) -> PyResult<TraceFormat> {
    TraceFormat::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
        PyValueError::new_err(format!(
            "unknown trace format `{name}`; known formats: {}",
            known.join(", ")
        ))
    })
}

/// (name, description) of every bundled preset, in the order `flashlane presets` lists them.
#[pyfunction]
fn presets() -> PyResult<Vec<(String, String)>> {
    PRESETS
        .iter()
        .map(|(name, _)| {
            let config = Config::from_preset(name, &[]).map_err(to_py_err)?;
            Ok((name.to_string(), config.description))
        })
        .collect()
}

/// The workload conditions of the trace at `path` under `preset` with `overrides`
/// (`KEY=VALUE`, as `--set`), as the JSON text of `flashlane trace stats FILE --preset P`'s
/// `conditions` (docs/workloads.md, "Conditions"); `remap` reads the trace twice and numbers
/// its pages densely (`--remap-addresses`), else addresses fold onto the logical capacity;
/// arrival times are multiplied by `time_scale` (as `run --time-scale`).
#[pyfunction]
#[pyo3(signature = (path, format, preset, overrides, remap, time_scale=1.0, max_bad_lines=0))]
#[allow(clippy::too_many_arguments)]
fn trace_conditions(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    preset: &str,
    overrides: Vec<String>,
    remap: bool,
    time_scale: f64,
    max_bad_lines: u64,
) -> PyResult<String> {
    let format = format.map(parse_format).transpose()?;
    let options = reader_options(max_bad_lines, false, None)?;
    let pairs = overrides
        .iter()
        .map(|text| parse_override(text))
        .collect::<Result<Vec<_>, _>>()
        .map_err(to_py_err)?;
    let conditions = py
        .detach(|| {
            workload::measure_conditions(&path, format, &options, preset, &pairs, remap, time_scale)
        })
        .map_err(to_py_err)?;
    serde_json::to_string(&conditions).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The switches of the `combined-8x8` preset (docs/models/combined.md): (name, paper, slot,
/// settings as `KEY=VALUE`, needs), in `COMBINED_SWITCHES`' order. Slot is `host_scheduler`,
/// `interconnect`, `device_scheduler` or `drive`.
/// One switch as Python sees it: (name, paper, slot, settings, needs).
type SwitchTuple = (String, String, String, Vec<String>, Vec<String>);

#[pyfunction]
fn combined_switches() -> Vec<SwitchTuple> {
    COMBINED_SWITCHES
        .iter()
        .map(|s| {
            let slot = match s.slot {
                Slot::HostScheduler => "host_scheduler",
                Slot::Interconnect => "interconnect",
                Slot::DeviceScheduler => "device_scheduler",
                Slot::Drive => "drive",
            };
            let strings = |list: &[&str]| list.iter().map(|v| v.to_string()).collect();
            (
                s.name.to_string(),
                s.paper.to_string(),
                slot.to_string(),
                strings(s.settings),
                strings(s.needs),
            )
        })
        .collect()
}

/// The `--set` overrides (`KEY=VALUE`) of a combination of `combined-8x8`'s switches, the
/// drive behaviours they need included; ValueError names an unknown switch or two of one slot.
#[pyfunction]
fn combined_settings(names: Vec<String>) -> PyResult<Vec<String>> {
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    settings_of(&names)
        .map(|pairs| pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect())
        .map_err(PyValueError::new_err)
}

/// Version of the simulator core this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_workloads, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(combined_switches, m)?)?;
    m.add_function(wrap_pyfunction!(trace_conditions, m)?)?;
    m.add_function(wrap_pyfunction!(combined_settings, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(open_trace, m)?)?;
    m.add_class::<TraceChunks>()?;
    Ok(())
}
