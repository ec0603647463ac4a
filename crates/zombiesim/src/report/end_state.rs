//! What the report reads of the FTL and the device when the run ends: timing figures
//! over the measured phase, wear, the content layer, state size, the device write
//! buffer, restarts, and what the integrity oracle found lost.

use crate::content::{ContentCounters, ContentGauges};
use crate::device::{BufferReport, Device};
use crate::ftl::{FtlExt, Wear};
use crate::timing::TimingSummary;

/// The FTL and the device at the end of a run.
pub(crate) struct EndState {
    /// Timing figures over the measured phase (`None` in counting mode).
    pub timing: Option<TimingSummary>,
    pub wear: Wear,
    /// The content layer's counters and gauges, when it is on.
    pub content: Option<(ContentCounters, ContentGauges)>,
    /// Bytes of the device's state.
    pub state_bytes: u64,
    pub buffer: Option<BufferReport>,
    pub restarts: u64,
    /// Durable pages the integrity oracle found lost (verified runs).
    pub durable_pages_lost: Option<u64>,
    /// What an FDP device counted per stream.
    pub fdp: Option<crate::ftl::FdpCounts>,
    /// What the device learnt of its zombies' lifetimes.
    pub zombie_weight: Option<crate::ftl::ZombieWeightReport>,
    /// What the placement fitted to the workload.
    pub placement_model: Option<crate::placement::PlacementModel>,
    /// Per stream, for a placement other than the default without FDP.
    pub streams: Option<Vec<crate::ftl::StreamCounts>>,
}

impl EndState {
    /// Of `device`, after a measured phase of `elapsed_ns` (`verify`: the run kept the
    /// integrity oracle).
    pub(crate) fn of(device: &Device, elapsed_ns: u64, verify: bool) -> EndState {
        let ftl = device.ftl();
        EndState {
            timing: ftl.timing_summary(elapsed_ns),
            wear: ftl.wear(),
            content: ftl.content_stats(),
            state_bytes: device.memory_bytes() as u64,
            buffer: device.buffer_report(),
            restarts: device.restarts(),
            // Checked after every power loss: a loss would have stopped the run.
            durable_pages_lost: verify.then(|| ftl.oracle().map_or(0, |o| o.lost_pages() as u64)),
            fdp: ftl.fdp_counts(),
            zombie_weight: ftl.summary().zombie_weight,
            placement_model: ftl.summary().placement_model,
            streams: ftl.summary().streams,
        }
    }
}
