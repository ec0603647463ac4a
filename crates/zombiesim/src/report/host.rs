//! The sections the host model adds to a report, over the measured phase: the
//! application's view (`app`), the buffer cache (`cache`) and the notification channel
//! (`notify`); each is `null` in a run without the host model.

use crate::config::NotifyMode;
use crate::latency::LatencyReport;
use serde::Serialize;

/// The application's view of the measured phase.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AppReport {
    pub threads: u32,
    pub requests: u64,
    pub read_pages: u64,
    pub write_pages: u64,
    pub sync_write_pages: u64,
    pub trim_pages: u64,
    /// Committed transactions (transactional workloads), and per simulated second.
    pub transactions: u64,
    pub tps: f64,
    /// Simulated time until the last thread finished.
    pub elapsed_s: f64,
    /// Time writers slept because dirty pages exceeded `host.dirty_ratio`, summed.
    pub throttled_s: f64,
    /// Application request latency (a cache hit costs `host.request_us`).
    pub latency: LatencyReport,
}

/// Writeback by reason, in pages.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct WritebackPages {
    /// Files dirty longer than `dirty_expire` (the periodic flusher).
    pub expire: u64,
    /// Dirty pages above `dirty_background_ratio`.
    pub background: u64,
    /// Dirty pages evicted to make room.
    pub evict: u64,
    /// Pages an application wrote back and waited for (a file system's ordered data
    /// before a commit, its journal checkpoint).
    pub sync: u64,
}

/// The buffer cache over the measured phase.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CacheReport {
    pub capacity_pages: u64,
    pub read_hits: u64,
    pub read_misses: u64,
    pub write_hits: u64,
    pub write_misses: u64,
    /// Application page writes absorbed by a page that was already dirty.
    pub absorbed_writes: u64,
    pub writeback_pages: WritebackPages,
    pub writeback_commands: u64,
    pub dirty_pages_mean: f64,
    pub dirty_pages_end: u64,
}

/// One sample of the device's awareness of zombies.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AwarenessPoint {
    pub t_s: f64,
    pub dirty_pages: u64,
    pub known_zombies: u64,
    pub awareness: f64,
}

/// The notification channel over the measured phase.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NotifyReport {
    pub mode: NotifyMode,
    #[serde(flatten)]
    pub counters: ChannelCounters,
    /// Mean of (pages the device knows as zombies ÷ dirty pages in the host), over
    /// samples with dirty pages (000 Table 3); at most 1: a mark of a page no longer
    /// dirty above the device (dropped, its withdrawal not yet delivered) is stale,
    /// not known, and the known zombies count at most the dirty pages (the oracle
    /// marks pages from the future, dirty above or not).
    pub awareness_mean: f64,
    pub known_zombies_mean: f64,
    /// Mean number of stale marks: pages the device holds as zombies whose dirty copy
    /// above it is gone without a write the device has heard of.
    pub stale_marks_mean: f64,
    pub queued_extents_end: u64,
    pub series: Vec<AwarenessPoint>,
}

/// Counters of the notification channel.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct ChannelCounters {
    /// Clean → dirty transitions reported to the channel.
    pub dirtied_pages: u64,
    /// Pages the device was told about.
    pub delivered_pages: u64,
    /// Pages dropped at delivery because they were no longer dirty (or, for a
    /// withdrawal, dirty again).
    pub stale_pages: u64,
    /// Dirty pages dropped above the device without a write (their hints withdrawn).
    pub dropped_pages: u64,
    /// Withdrawals delivered: pages the device was told are no longer zombies.
    pub withdrawn_pages: u64,
    /// Extents delivered.
    pub extents: u64,
    /// Explicit notification commands (`command` mode).
    pub commands: u64,
}
