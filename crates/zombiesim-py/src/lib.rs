//! `zombiesim._core`: thin PyO3 bindings over the `zombiesim` core crate.
//!
//! Nothing per request crosses this boundary: a simulation runs with the GIL
//! released and comes back as one JSON report. The progress callback (if any) is
//! called with the GIL every ~100 ms; pending signals (Ctrl-C) are checked at the
//! same moments and stop the run, which then returns a report marked interrupted.

mod config;
mod content;
mod errors;
mod external;
mod trace;
mod warm;

use config::PyConfig;
use errors::IntoPy;
use pyo3::prelude::*;
use warm::PyPreconditionCache;
use zombiesim::trace::TraceCache;
use zombiesim::{Phase, Progress, RunOptions, WorkloadSpec};

/// Call `callback(phase, fraction, write_pages)` and check signals; false stops the run.
/// A `KeyboardInterrupt` stops the run quietly (the report says interrupted); any
/// other exception from the callback is kept and raised when the run returns.
pub(crate) fn progress_bridge<'a>(
    callback: &'a Option<Py<PyAny>>,
    failure: &'a mut Option<PyErr>,
    policies: Option<&'a external::PyPolicies>,
) -> impl FnMut(&Progress) -> bool + Send + 'a {
    move |p: &Progress| {
        if policies.is_some_and(|p| p.failed()) {
            return false;
        }
        Python::attach(|py| {
            if let Err(e) = py.check_signals() {
                if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    *failure = Some(e);
                }
                return false;
            }
            let Some(cb) = callback else { return true };
            let phase = match p.phase {
                Phase::Oracle => "oracle",
                Phase::Precondition => "precondition",
                Phase::Measure => "measure",
            };
            match cb.call1(py, (phase, p.fraction, p.write_pages)) {
                Ok(ret) => !matches!(ret.extract::<bool>(py), Ok(false)),
                Err(e) => {
                    if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                        *failure = Some(e);
                    }
                    false
                }
            }
        })
    }
}

/// Run `f` with the GIL released, bridging progress (and Ctrl-C) to Python; an
/// exception raised by the progress callback wins over the result.
pub(crate) fn detached<T: Send>(
    py: Python<'_>,
    progress: &Option<Py<PyAny>>,
    f: impl FnOnce(&mut dyn FnMut(&Progress) -> bool) -> zombiesim::Result<T> + Send,
) -> PyResult<T> {
    detached_with(py, progress, None, f)
}

/// [`detached`] for a run asking Python `policies`: one that fails stops the run at the
/// next progress tick, and what it raised wins over the result.
pub(crate) fn detached_with<T: Send>(
    py: Python<'_>,
    progress: &Option<Py<PyAny>>,
    policies: Option<&external::PyPolicies>,
    f: impl FnOnce(&mut dyn FnMut(&Progress) -> bool) -> zombiesim::Result<T> + Send,
) -> PyResult<T> {
    let mut failure = None;
    let result = py.detach(|| {
        let mut bridge = progress_bridge(progress, &mut failure, policies);
        f(&mut bridge)
    });
    if let Some(e) = policies.and_then(|p| p.take_failure()) {
        return Err(e);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    result.py()
}

/// Run one simulation and return its report as JSON.
#[pyfunction]
#[pyo3(signature = (config, workload, seed = 0, verify = false, reproducible = false,
    max_memory = None, force_unsafe = false, inline_trace = false, trace_cache = None,
    precondition_cache = None, progress = None, victim = None, placement = None,
    placement_batch = 4096))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    config: &PyConfig,
    workload: &str,
    seed: u64,
    verify: bool,
    reproducible: bool,
    max_memory: Option<u64>,
    force_unsafe: bool,
    inline_trace: bool,
    trace_cache: Option<&str>,
    precondition_cache: Option<PyRef<'_, PyPreconditionCache>>,
    progress: Option<Py<PyAny>>,
    victim: Option<Py<PyAny>>,
    placement: Option<Py<PyAny>>,
    placement_batch: usize,
) -> PyResult<String> {
    let spec = WorkloadSpec::parse(workload).py()?;
    let cfg = config.inner.clone();
    let mut opts = RunOptions {
        seed,
        verify,
        reproducible,
        max_memory,
        force_unsafe,
        inline_trace,
        trace_cache: TraceCache::from_setting(trace_cache).py()?,
        precondition_cache: precondition_cache.map(|c| c.inner.clone()),
        external: Default::default(),
    };
    let policies = external::PyPolicies::attach(py, &mut opts, victim, placement, placement_batch)?;
    let report = detached_with(py, &progress, Some(&policies), |p| {
        zombiesim::simulate(&cfg, &spec, &opts, p)
    })?;
    Ok(report.to_json())
}

/// One part of a memory estimate: `(what, config key, bytes)`.
type MemoryPartTuple = (String, String, u64);

/// The estimated state of a run of `config`: `(total bytes, [(what, key, bytes)])`.
#[pyfunction]
#[pyo3(signature = (config, verify = false))]
fn memory_estimate(config: &PyConfig, verify: bool) -> PyResult<(u64, Vec<MemoryPartTuple>)> {
    config.inner.validate().py()?;
    let est = zombiesim::config::MemoryEstimate::new(&config.inner, verify).py()?;
    let parts = est
        .parts
        .iter()
        .map(|p| (p.what.to_string(), p.key.to_string(), p.bytes))
        .collect();
    Ok((est.total(), parts))
}

/// Bytes of memory available for new allocations, when the system says.
#[pyfunction]
fn available_memory() -> Option<u64> {
    zombiesim::config::available_memory()
}

/// The validation cases, as JSON (`full` = the whole table).
#[pyfunction]
#[pyo3(signature = (full = false))]
fn validation_cases(full: bool) -> String {
    serde_json::to_string(&zombiesim::validate::cases(full)).expect("cases serialize")
}

/// Run one validation case (a JSON object from `validation_cases`); returns the row as JSON.
#[pyfunction]
#[pyo3(signature = (case_json, seed = 1, progress = None))]
fn validate_case(
    py: Python<'_>,
    case_json: &str,
    seed: u64,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    // Case objects from `validation_cases`; a missing or mistyped field is an error.
    let case: zombiesim::validate::Case = serde_json::from_str(case_json)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("validation case: {e}")))?;
    let row = detached(py, &progress, |p| {
        zombiesim::validate::run_case(&case, seed, p)
    })?;
    Ok(serde_json::to_string(&row).expect("rows serialize"))
}

/// The validation tolerance (relative).
#[pyfunction]
fn validation_tolerance() -> f64 {
    zombiesim::validate::TOLERANCE
}

/// Analytic write amplification of a policy at `alpha` = 1 + OP, `b` pages per block.
#[pyfunction]
fn analytic_wa(policy: &str, alpha: f64, b: u32) -> Option<f64> {
    zombiesim::analytic::wa_for_policy(policy, alpha, b)
}

/// `(name, description)` of every preset.
#[pyfunction]
fn presets() -> PyResult<Vec<(String, String)>> {
    zombiesim::config::preset_names()
        .into_iter()
        .map(|n| {
            let cfg = zombiesim::Config::preset(n).py()?;
            Ok((n.to_string(), cfg.description))
        })
        .collect()
}

/// The TOML text of a preset.
#[pyfunction]
fn preset_toml(name: &str) -> PyResult<String> {
    zombiesim::config::preset_toml(name)
        .map(str::to_string)
        .ok_or_else(|| errors::to_py(zombiesim::Config::preset(name).unwrap_err()))
}

/// A scheme as Python sees it: `(name, description, [(key, value), ...])`.
type SchemeTuple = (String, String, Vec<(String, String)>);

/// `(name, description, [(key, value), ...])` of every scheme.
#[pyfunction]
fn schemes() -> Vec<SchemeTuple> {
    zombiesim::config::scheme_names()
        .into_iter()
        .map(|s| (s.name, s.description, s.settings))
        .collect()
}

/// `(name, keys, description)` of every synthetic workload.
#[pyfunction]
fn workloads() -> Vec<(String, String, String)> {
    zombiesim::workload::WORKLOADS
        .iter()
        .map(|w| {
            (
                w.name.to_string(),
                w.keys.to_string(),
                w.description.to_string(),
            )
        })
        .collect()
}

/// Keys every synthetic workload accepts.
#[pyfunction]
fn workload_common_keys() -> &'static str {
    zombiesim::workload::WorkloadInfo::common_keys()
}

/// Check a workload spec; returns it trimmed, raises `WorkloadError` when malformed.
#[pyfunction]
fn check_workload(spec: &str) -> PyResult<String> {
    Ok(WorkloadSpec::parse(spec).py()?.as_str().to_string())
}

/// Bytes from a size such as `4096`, `16KiB`, `5.12GB` (the suffixes configs take);
/// a malformed size raises `ConfigError` naming `key`.
#[pyfunction]
#[pyo3(signature = (text, key = "size"))]
fn parse_bytes(text: &str, key: &str) -> PyResult<u64> {
    zombiesim::units::parse_bytes(text)
        .map_err(|reason| zombiesim::Error::config(key, reason))
        .py()
}

/// Every victim policy's syntax.
#[pyfunction]
fn policies() -> Vec<&'static str> {
    zombiesim::PolicySpec::SYNTAX.to_vec()
}

/// Every FTL kind's name (`ftl.kind`), in registry order.
#[pyfunction]
fn ftl_kinds() -> Vec<&'static str> {
    zombiesim::config::FtlKind::ALL
        .iter()
        .map(|k| k.name())
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", zombiesim::VERSION)?;
    m.add_class::<PyConfig>()?;
    m.add_class::<PyPreconditionCache>()?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(memory_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(available_memory, m)?)?;
    m.add_function(wrap_pyfunction!(validation_cases, m)?)?;
    m.add_function(wrap_pyfunction!(validate_case, m)?)?;
    m.add_function(wrap_pyfunction!(validation_tolerance, m)?)?;
    m.add_function(wrap_pyfunction!(analytic_wa, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(workloads, m)?)?;
    m.add_function(wrap_pyfunction!(workload_common_keys, m)?)?;
    m.add_function(wrap_pyfunction!(check_workload, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(ftl_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    trace::register(m)?;
    external::register(m)?;
    content::register(m)?;
    Ok(())
}
