//! The `[timing]` section: the NAND and controller timing model (counting mode when
//! off), the flash scheduler and program/erase suspension, with their defaults.

use super::Scheduler;
use serde::{Deserialize, Serialize};

/// NAND and controller timing (used when `enabled`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimingConfig {
    /// `false`: counting mode (WAF studies). `true`: the NAND timing model.
    pub enabled: bool,
    /// Array read time of one page (tR), µs.
    pub read_us: f64,
    /// Normal program time of one page (tPROG), µs.
    pub program_us: f64,
    /// Fast-mode (SLC-like) program time, µs.
    pub fast_program_us: f64,
    /// Block erase time (tBERS), µs.
    pub erase_us: f64,
    /// Channel (bus) transfer rate, MB/s (10^6 bytes per second).
    pub channel_mb_s: f64,
    /// ECC decode time per flash page read, µs (skipped for reads served from DRAM).
    pub ecc_us: f64,
    /// DRAM access time per page, ns.
    pub dram_ns: f64,
    /// Firmware time per candidate block scored during a victim search, µs.
    pub gc_search_us: f64,
    /// Planes of a die run operations in parallel (multi-plane); otherwise a die
    /// runs one operation at a time.
    pub multi_plane: bool,
    /// When queued flash work runs: `fifo`, `rps` (reads first) or `suspend`.
    pub scheduler: Scheduler,
    /// Time to suspend a program or erase for a host read, and to resume it, µs.
    pub suspend_us: f64,
    /// Suspensions one program or erase allows before it runs to completion.
    pub max_suspensions: u32,
    /// `false`: garbage collection, block-mapped merges and DFTL's translation-page
    /// reads and writes are counted (WAF, erases, GC latency) but take no device time,
    /// so the host runs at the pace of a device without them, as a trace recorded on
    /// another device and replayed does (002's method).
    pub upkeep_time: bool,
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            enabled: false,
            read_us: 50.0,
            program_us: 500.0,
            fast_program_us: 250.0,
            erase_us: 3000.0,
            channel_mb_s: 800.0,
            ecc_us: 0.0,
            dram_ns: 20.0,
            gc_search_us: 0.0,
            multi_plane: true,
            scheduler: Scheduler::Fifo,
            suspend_us: 20.0,
            max_suspensions: 4,
            upkeep_time: true,
        }
    }
}
