//! The `[stats]` section: how often the time series samples the run, and when the
//! measured phase counts as steady, with their defaults.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsConfig {
    /// Record a time-series point every this many host page writes (0 = derive from
    /// `series_points` when the workload's length is known).
    pub series_every: u64,
    /// Aim for about this many points over the measured phase (0 = no series).
    pub series_points: u32,
    /// The measured phase reached steady state when its last quarter's write
    /// amplification is within this fraction of the quarter before's.
    pub steady_waf_tolerance: f64,
    /// The same for the mean write latency of a timed run.
    pub steady_latency_tolerance: f64,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig {
            series_every: 0,
            series_points: 100,
            steady_waf_tolerance: 0.02,
            steady_latency_tolerance: 0.10,
        }
    }
}
