//! What replaying a trace did, for the report (its `trace` section): records read,
//! skipped and remapped, a notified trace's host events and the placement identifiers
//! its writes carried. A trace replay gives it through [`super::Workload::trace_info`],
//! which every other workload answers `None`.

use crate::trace::{PlacementStats, RemapStats};
use serde::Serialize;

/// What replaying the trace did, for the report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TraceInfo {
    pub path: String,
    pub format: String,
    pub records: u64,
    pub flushes: u64,
    pub skipped_lines: u64,
    /// The first malformed lines skipped (`on_error = skip`), as `line: reason`.
    pub skipped_examples: Vec<String>,
    pub remap: String,
    pub remapped: RemapStats,
    /// The one device kept (`--trace-device`), if any.
    pub device: Option<u32>,
    /// The most records replayed (`--limit`), if any.
    pub limit: Option<u64>,
    /// A notified trace's host events (absent for plain block traces): they replace
    /// the host model, and reach the device through the notification channel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notified: Option<NotifiedInfo>,
    /// The NVMe placement identifiers the replayed writes carried (native version 3;
    /// absent when none did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementStats>,
}

/// The host events a notified trace replayed.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct NotifiedInfo {
    pub dirty_events: u64,
    pub clean_events: u64,
}
