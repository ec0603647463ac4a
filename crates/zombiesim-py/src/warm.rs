//! `PreconditionCache`: preconditioned devices shared by the runs of one call.

use crate::config::PyConfig;
use pyo3::prelude::*;
use std::sync::Arc;
use zombiesim::PreconditionCache;

/// Preconditioned devices kept for reuse by runs whose device settings and seed are
/// the same (`zombiesim::PreconditionCache`); `budget_bytes` bounds their estimated
/// state. Pass it to `simulate` / `simulate_trace` as `precondition_cache`.
#[pyclass(name = "PreconditionCache", module = "zombiesim._core", frozen)]
pub struct PyPreconditionCache {
    pub inner: Arc<PreconditionCache>,
}

#[pymethods]
impl PyPreconditionCache {
    #[new]
    fn new(budget_bytes: u64) -> Self {
        PyPreconditionCache {
            inner: Arc::new(PreconditionCache::new(budget_bytes)),
        }
    }

    /// The key a run of `config` with `seed` and `verify` is kept under (runs with the
    /// same key age the same device); `None` when its device is never kept (its
    /// preconditioning replays the workload's own writes).
    #[staticmethod]
    fn key(config: &PyConfig, seed: u64, verify: bool) -> Option<String> {
        PreconditionCache::key_of(&config.inner, seed, verify)
    }

    /// `{"hits", "misses", "devices", "bytes"}`: runs that started from a kept device,
    /// runs that preconditioned, the devices held and their estimated bytes.
    fn stats(&self) -> std::collections::BTreeMap<&'static str, u64> {
        let s = self.inner.stats();
        [
            ("hits", s.hits),
            ("misses", s.misses),
            ("devices", s.devices),
            ("bytes", s.bytes),
        ]
        .into()
    }
}
