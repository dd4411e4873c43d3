//! `flashlane._native`: the Python face of flashlane-core.
//!
//! Only conversion lives here: Python arguments become a [`RunSpec`] exactly the way the
//! `flashlane run` command builds one, and the core's [`flashlane_core::stats::Summary`] comes
//! back as the same JSON text `flashlane run --json` writes. The simulation runs with the GIL
//! released.

use std::path::PathBuf;

use flashlane_core::config::{parse_override, Config, PRESETS};
use flashlane_core::trace::TraceFormat;
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

/// Run one simulation and return its summary as JSON text (the layout of `flashlane run --json`).
#[pyfunction]
#[pyo3(signature = (preset, config, trace, format, overrides, warmup_requests, max_requests, seed, check_integrity))]
#[allow(clippy::too_many_arguments)]
fn run_json(
    py: Python<'_>,
    preset: Option<String>,
    config: Option<PathBuf>,
    trace: PathBuf,
    format: Option<String>,
    overrides: &Bound<'_, PyDict>,
    warmup_requests: u64,
    max_requests: Option<u64>,
    seed: u64,
    check_integrity: bool,
) -> PyResult<String> {
    let mut pairs = Vec::with_capacity(overrides.len());
    for (key, value) in overrides.iter() {
        let key: String = key
            .extract()
            .map_err(|_| PyTypeError::new_err("override keys must be str"))?;
        let text = override_text(&key, &value)?;
        pairs.push(parse_override(&format!("{key}={text}")).map_err(to_py_err)?);
    }
    let config = match (preset, config) {
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err(
                "give a preset or a config file, not both",
            ))
        }
        (Some(name), None) => Config::from_preset(&name, &pairs),
        (None, Some(path)) => Config::from_file(&path, &pairs),
        (None, None) => return Err(PyValueError::new_err("give a preset or a config file")),
    }
    .map_err(to_py_err)?;
    let trace_format = match format {
        Some(name) => Some(TraceFormat::from_name(&name).ok_or_else(|| {
            let known: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
            PyValueError::new_err(format!(
                "unknown trace format `{name}`; known formats: {}",
                known.join(", ")
            ))
        })?),
        None => None,
    };
    // The CLI's defaults for everything the Python API does not expose: one trace, open-loop
    // replay at trace speed, strict addresses.
    let mut spec = RunSpec::new(config, trace, trace_format);
    spec.warmup_requests = warmup_requests;
    spec.max_requests = max_requests;
    spec.seed = seed;
    spec.check_integrity = check_integrity;
    let summary = py
        .detach(|| flashlane_core::run(&spec))
        .map_err(to_py_err)?;
    serde_json::to_string(&summary).map_err(|e| PyValueError::new_err(e.to_string()))
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

/// Version of the simulator core this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
