//! The `[stats]` section: how often the time series samples the run, with its
//! defaults.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsConfig {
    /// Record a time-series point every this many host page writes (0 = derive from
    /// `series_points` when the workload's length is known).
    pub series_every: u64,
    /// Aim for about this many points over the measured phase (0 = no series).
    pub series_points: u32,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig {
            series_every: 0,
            series_points: 100,
        }
    }
}
