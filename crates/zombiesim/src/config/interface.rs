//! The `[interface]` section: how requests reach the device in timing mode (open or
//! closed loop, queue depth, time compression), with its defaults.

use serde::{Deserialize, Serialize};

/// How requests reach the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Replay {
    /// At the trace's timestamps (divided by `speed`); synthetic workloads have
    /// none and fall back to closed loop.
    Open,
    /// `queue_depth` requests outstanding, the next issued as one completes.
    Closed,
}

/// The host interface (timing mode).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InterfaceConfig {
    /// Requests the device accepts at once.
    pub queue_depth: u32,
    pub replay: Replay,
    /// Open-loop time compression: arrival times are divided by this.
    pub speed: f64,
}

impl Default for InterfaceConfig {
    fn default() -> Self {
        InterfaceConfig {
            queue_depth: 32,
            replay: Replay::Open,
            speed: 1.0,
        }
    }
}
