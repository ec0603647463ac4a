//! `zombiesim._core.Config`: an immutable wrapper of the core configuration.

use crate::errors::IntoPy;
use pyo3::prelude::*;
use zombiesim::Config;

/// A resolved, validated device configuration. Immutable: every change returns a new one.
/// Pickles as its TOML text.
#[pyclass(name = "Config", module = "zombiesim._core", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyConfig {
    pub inner: Config,
}

#[pymethods]
impl PyConfig {
    /// Parse a TOML document; `origin` names it in error messages.
    #[new]
    #[pyo3(signature = (toml_text = None, origin = "<string>"))]
    fn new(toml_text: Option<&str>, origin: &str) -> PyResult<Self> {
        let inner = match toml_text {
            Some(t) => Config::from_toml_str(t, origin).py()?,
            None => Config::preset("default").py()?,
        };
        Ok(PyConfig { inner })
    }

    /// A named preset.
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Self> {
        Ok(PyConfig {
            inner: Config::preset(name).py()?,
        })
    }

    /// A new config with dotted overrides applied, e.g. `[("gc.policy", "greedy")]`,
    /// and the notes of the values dropped because nothing reads them (keys the pairs do
    /// not name, and the named keys listed in `where_read`: one cell of a comparison).
    #[pyo3(signature = (pairs, where_read = Vec::new()))]
    fn set(
        &self,
        pairs: Vec<(String, String)>,
        where_read: Vec<String>,
    ) -> PyResult<(Self, Vec<String>)> {
        let mut inner = self.inner.clone();
        let notes = inner.set_many_where_read(&pairs, &where_read).py()?;
        Ok((PyConfig { inner }, notes))
    }

    /// A new config with a scheme's settings applied, and the notes of `set`.
    /// The scheme's settings, then `overrides`, applied and validated together (a
    /// scheme may need keys that only the overrides give, such as a buffer size).
    #[pyo3(signature = (name, overrides = Vec::new()))]
    fn apply_scheme(
        &self,
        name: &str,
        overrides: Vec<(String, String)>,
    ) -> PyResult<(Self, Vec<String>)> {
        let mut pairs = zombiesim::config::scheme_settings(name).py()?;
        pairs.extend(overrides);
        self.set(pairs, Vec::new())
    }

    /// The value at a dotted key, as TOML text.
    fn get(&self, key: &str) -> PyResult<String> {
        self.inner.get(key).py()
    }

    /// The whole configuration as TOML.
    fn to_toml(&self) -> String {
        self.inner.to_toml()
    }

    /// The whole configuration as JSON.
    fn to_json(&self) -> String {
        serde_json::to_string(&self.inner).expect("configs serialize")
    }

    /// Logical pages, physical pages and other derived sizes, as JSON.
    fn geometry_json(&self) -> PyResult<String> {
        let g = zombiesim::flash::Geometry::new(&self.inner).py()?;
        let layout = zombiesim::config::FtlLayout::new(&self.inner, &g).py()?;
        Ok(serde_json::json!({
            "planes": g.planes,
            "blocks": g.blocks,
            "pages_per_block": g.pages_per_block,
            "page_size": g.page_size,
            "physical_pages": g.physical_pages,
            "logical_pages": g.logical_pages,
            "gc_units": layout.units.len(),
            "over_provisioning": g.over_provisioning(),
        })
        .to_string())
    }

    fn __getnewargs__(&self) -> (String, &'static str) {
        (self.inner.to_toml(), "<pickle>")
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.to_toml().hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        format!(
            "Config(policy={}, op={}, blocks={}x{} pages)",
            self.inner.gc.policy,
            self.inner.ftl.over_provisioning,
            self.inner.flash.channels
                * self.inner.flash.chips_per_channel
                * self.inner.flash.dies_per_chip
                * self.inner.flash.planes_per_die
                * self.inner.flash.blocks_per_plane,
            self.inner.flash.pages_per_block
        )
    }
}
