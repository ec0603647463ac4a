//! The `[interface]` section: how requests reach the device in timing mode (open or
//! closed loop, queue depth, time compression, the NVMe link's time), with its defaults.

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

/// How the controller picks the next command among the submission queues of a
/// `flows:` workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// Round robin: one command from each queue with one waiting, in turn.
    Rr,
    /// NVMe weighted round robin: urgent queues first, then the high, medium and low
    /// classes by `wrr_weights` (a flow's `weight` instead of its class's).
    Wrr,
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
    /// Time from the host's doorbell to the command at the controller, µs (NVMe
    /// submission: the doorbell write and the SQ entry's fetch over the link).
    pub submit_us: f64,
    /// Time from the device's completion to the host seeing it, µs (the CQ entry).
    pub complete_us: f64,
    /// The host link's payload rate, MB/s (10^6 bytes per second): write data crosses
    /// it before the command runs, read data after (0 = no transfer time).
    pub link_mb_s: f64,
    /// Arbitration among the submission queues of a `flows:` workload.
    pub arbitration: Arbitration,
    /// Commands per round of the high, medium and low WRR classes (MQSim's 4, 2, 1).
    pub wrr_weights: [u32; 3],
}

impl Default for InterfaceConfig {
    fn default() -> Self {
        InterfaceConfig {
            queue_depth: 32,
            replay: Replay::Open,
            speed: 1.0,
            // Off: the seeds' reproductions and the timed goldens were taken without
            // them. MQSim's PCIe link is submit 0.041, complete 0.011, link 3282
            // (interface/link.rs derives them).
            submit_us: 0.0,
            complete_us: 0.0,
            link_mb_s: 0.0,
            arbitration: Arbitration::Rr,
            wrr_weights: [4, 2, 1],
        }
    }
}
