//! Content functions of `zombiesim._core`: the value analyses of a hashed trace.

use crate::errors::IntoPy;
use pyo3::prelude::*;
use zombiesim::trace::{OnError, ReadOptions, TraceFormat};

/// Analyse the values of a hashed trace (001 §II); returns the analysis as JSON.
#[pyfunction]
#[pyo3(signature = (path, format_name, pool_sizes, limit = None, on_error = "stop"))]
pub fn analyze_values(
    py: Python<'_>,
    path: &str,
    format_name: &str,
    pool_sizes: Vec<u64>,
    limit: Option<u64>,
    on_error: &str,
) -> PyResult<String> {
    let format = format_name.parse::<TraceFormat>().py()?;
    if !format.has_values() {
        let hashed: Vec<&str> = TraceFormat::ALL
            .iter()
            .filter(|f| f.has_values())
            .map(|f| f.name())
            .collect();
        return Err(crate::errors::to_py(zombiesim::Error::config(
            "format",
            format!(
                "`{format}` carries no content hashes (hashed formats: {})",
                hashed.join(", ")
            ),
        )));
    }
    let options = ReadOptions {
        on_error: on_error.parse::<OnError>().py()?,
        ..ReadOptions::default()
    };
    let path = std::path::PathBuf::from(path);
    let analysis = py
        .detach(|| {
            zombiesim::content::analyze::analyze_values(&path, format, &options, &pool_sizes, limit)
        })
        .py()?;
    Ok(serde_json::to_string(&analysis).expect("analyses serialize"))
}

/// Analyse the values a synthetic workload writes (a stand-in for a hashed trace) on
/// `logical_pages` pages; returns the analysis as JSON.
#[pyfunction]
#[pyo3(signature = (spec, logical_pages, pool_sizes, page_size = 4096, seed = 1, limit = None))]
pub fn analyze_workload(
    py: Python<'_>,
    spec: &str,
    logical_pages: u64,
    pool_sizes: Vec<u64>,
    page_size: u64,
    seed: u64,
    limit: Option<u64>,
) -> PyResult<String> {
    let analysis = py
        .detach(|| {
            zombiesim::content::analyze::analyze_workload(
                spec,
                logical_pages,
                page_size,
                seed,
                &pool_sizes,
                limit,
            )
        })
        .py()?;
    Ok(serde_json::to_string(&analysis).expect("analyses serialize"))
}

/// Register the content functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze_values, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_workload, m)?)?;
    Ok(())
}
