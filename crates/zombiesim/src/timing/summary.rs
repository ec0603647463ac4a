//! The timing model's figures for the report: GC busy time, the utilisation of each
//! channel and die, and the host reads that waited for GC (`latency.gc_blocked`).

use serde::Serialize;

/// Host reads that waited for garbage collection on their die.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct GcBlocked {
    /// Host flash reads that found their die busy with GC.
    pub reads: u64,
    /// Their waits for GC, summed (s), on average and at most (µs).
    pub total_s: f64,
    pub mean_us: f64,
    pub max_us: f64,
}

/// Timing figures for the report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TimingSummary {
    /// Accumulated time of GC reads, programs and erases (003's "GC latency"), s.
    pub gc_busy_s: f64,
    /// Busy fraction of each channel over the elapsed time.
    pub channel_utilisation: Vec<f64>,
    /// Busy fraction of each die (or plane, with multi-plane) over the elapsed time.
    pub die_utilisation: Vec<f64>,
    /// Reported under `latency.gc_blocked`.
    #[serde(skip)]
    pub gc_blocked: GcBlocked,
}
