//! The `[precondition]` section: how the device is aged before the measured phase
//! (a sequential fill, random drive writes, a steady-state stop), with its defaults.

use serde::{Deserialize, Serialize};

/// Which address pattern the random part of preconditioning uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionPattern {
    /// Uniform random single-page writes over the whole logical space.
    Uniform,
    /// The measured workload's own write addresses (its steady state).
    Workload,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreconditionConfig {
    /// Write every logical page once, in order, before anything else.
    pub fill: bool,
    /// At most this many drive-writes of random writes after the fill.
    pub random_drive_writes: f64,
    pub pattern: PreconditionPattern,
    /// Stop the random phase early once write amplification over consecutive
    /// quarter-drive-write windows changes by less than this fraction (0 = never).
    pub steady_tolerance: f64,
}

impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            fill: true,
            random_drive_writes: 2.0,
            pattern: PreconditionPattern::Uniform,
            steady_tolerance: 0.005,
        }
    }
}

impl PreconditionConfig {
    /// Whether the device is aged with the measured workload's own writes
    /// (`pattern = "workload"` and some random writes): such a device depends on the
    /// workload, so it is never shared between runs.
    pub fn replays_own_writes(&self) -> bool {
        self.pattern == PreconditionPattern::Workload && self.random_drive_writes > 0.0
    }
}
