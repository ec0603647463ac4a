//! The one value a run produces. Its JSON form is the stable, documented schema
//! (`docs/report.md`): the top-level counters and `waf` cover the measured phase;
//! preconditioning is reported apart under `precondition`.

mod assemble;
mod end_state;
mod fdp;
mod flows;
mod host;
mod streams;

pub(crate) use assemble::{MeasuredSections, RunParts};
pub(crate) use end_state::EndState;
pub use fdp::{FdpEvents, FdpLog, FdpReport, HandleReport, PoolReport};
pub use flows::{FlowReport, FlowsReport};
pub use host::{
    AppReport, AwarenessPoint, CacheReport, ChannelCounters, NotifyReport, WritebackPages,
};
pub use streams::StreamReport;

use crate::ftl::Wear;
use crate::latency::{LatencyReport, Throughput};
use crate::stats::{ByCause, Counters, SeriesPoint};
use crate::timing::TimingSummary;
use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostStats {
    pub requests: u64,
    pub write_pages: u64,
    pub read_pages: u64,
    pub trim_pages: u64,
    /// Reads of pages never written or trimmed (answered without a flash read).
    pub read_unmapped_pages: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlashStats {
    pub programs: u64,
    pub programs_by_cause: ByCause,
    pub reads: u64,
    pub reads_by_cause: ByCause,
    pub erases: u64,
    pub erases_by_cause: ByCause,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GcStats {
    /// Times GC was triggered (one invocation may reclaim several blocks).
    pub invocations: u64,
    /// Blocks reclaimed.
    pub victims: u64,
    pub pages_copied: u64,
    /// Mean valid pages copied per reclaimed block.
    pub copies_per_victim: f64,
    /// Blocks reclaimed by background GC while the device was idle (among `victims`).
    pub background_victims: u64,
    /// Copies of pages the device knew as zombies (among `pages_copied`; the rest were live).
    pub zombie_pages_copied: u64,
    /// Relocated pages by their state (SPEC §1, 003 Fig. 8); they sum to `pages_copied`.
    pub copied_by_state: CopiedByState,
    /// Relocations whose content came from the device write buffer (no flash read).
    pub buffer_reads: u64,
    /// Relocations programmed in fast-write mode.
    pub fast_programs: u64,
    /// Shadow pages not copied at all (the skip policy).
    pub skipped: u64,
    /// Accumulated time of GC reads (with ECC), buffer reads, programs (normal or
    /// fast) and erases at the configured latencies, s (003 Fig. 7); counted in
    /// counting mode too. `timing.gc_busy_s` is the same sum, taken by the timing
    /// model, and agrees with it.
    pub latency_s: f64,
}

/// The FTL's own section.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FtlReport {
    /// `ftl.kind`.
    pub kind: String,
    /// Merges of a block-mapped FTL by kind (their flash operations are under the
    /// `merge_*` causes); `null` for the page-mapped FTLs.
    pub merges: Option<MergeStats>,
    /// DFTL's cached mapping table; `null` for the other FTLs.
    pub cmt: Option<CmtStats>,
}

/// Merges by kind.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct MergeStats {
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
}

/// Cached-mapping-table lookups.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct CmtStats {
    pub hits: u64,
    pub misses: u64,
    /// hits ÷ (hits + misses); `null` when nothing was looked up.
    pub hit_ratio: Option<f64>,
}

impl FtlReport {
    /// The section for `kind` from the measured phase's counters.
    pub fn new(kind: crate::config::FtlKind, c: &Counters) -> Self {
        let lookups = c.cmt_hits + c.cmt_misses;
        FtlReport {
            kind: kind.name().to_string(),
            merges: kind.block_mapped().then_some(MergeStats {
                switch: c.merges[0],
                partial: c.merges[1],
                full: c.merges[2],
            }),
            cmt: kind.spec().mapping_cache.then_some(CmtStats {
                hits: c.cmt_hits,
                misses: c.cmt_misses,
                hit_ratio: (lookups > 0).then(|| c.cmt_hits as f64 / lookups as f64),
            }),
        }
    }
}

/// GC relocations by page state.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct CopiedByState {
    pub live: u64,
    pub host_shadow: u64,
    pub device_shadow: u64,
    pub twin_shadow: u64,
}

/// Retention refresh (003 §3.3): blocks refreshed, how many were fast-written, the
/// valid pages moved, and the restarts that ran.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct RefreshReport {
    pub blocks: u64,
    pub fast_blocks: u64,
    pub pages: u64,
    pub restarts: u64,
    /// Refresh programs ÷ all flash programs of the measured phase.
    pub program_share: f64,
}

/// Power losses of the measured phase (`device.restart_at`, `device.power_loss_every`):
/// what the volatile buffers dropped, the shadows that returned to live, the
/// fast-written blocks refreshed at power-on, and whether anything durable was lost.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct PowerLossReport {
    /// Power losses that ran (restart times reached together count once; a restart
    /// time and `power_loss_every` due at the same request are one power loss).
    pub events: u64,
    /// Dirty pages the volatile device write buffer dropped, summed over the events
    /// (0 with a non-volatile buffer or none).
    pub device_buffer_lost_pages: u64,
    /// Dirty pages the host write buffer (`host.buffer`) dropped, summed.
    pub host_buffer_lost_pages: u64,
    /// Pages the device knew as zombies (host-shadow) that returned to live, summed.
    pub zombies_revived: u64,
    /// Fast-written blocks refreshed at power-on, summed (among `refresh.fast_blocks`).
    pub fast_blocks_refreshed: u64,
    /// Durable pages lost (no copy of their newest version left anywhere): checked by
    /// the integrity oracle after every event, so 0 in a verified run (a loss stops the
    /// run with an integrity error); `null` when the run did not verify.
    pub durable_pages_lost: Option<u64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceInfo {
    pub logical_pages: u64,
    pub physical_pages: u64,
    pub page_size: u64,
    pub pages_per_block: u32,
    pub blocks: u32,
    pub planes: u32,
    pub gc_units: u32,
    /// Configured over-provisioning, physical / logical − 1.
    pub over_provisioning: f64,
    /// Mean pages held out of the data cycle during the measured phase (free
    /// blocks and the unwritten part of open blocks).
    pub held_back_pages_mean: f64,
    /// `(physical − held back) / logical − 1`: the over-provisioning GC actually sees,
    /// measured while every logical page holds data; `null` when the device never filled
    /// (preconditioning off and the run wrote only part of the logical space).
    pub effective_over_provisioning: Option<f64>,
    /// Approximate bytes of simulator state for the device.
    pub state_bytes: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PhaseReport {
    pub host_write_pages: u64,
    pub flash_programs: u64,
    pub flash_erases: u64,
    pub gc_pages_copied: u64,
    /// `null` when the phase wrote nothing.
    pub waf: Option<f64>,
    /// Host page writes ÷ logical pages.
    pub drive_writes: f64,
    /// Whether the random phase stopped because write amplification had settled.
    pub steady: bool,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunInfo {
    pub version: String,
    pub seed: u64,
    pub workload: String,
    /// The full resolved configuration.
    pub config: serde_json::Value,
    /// Wall time of the whole simulation (preconditioning included); `null` in
    /// reproducible mode, the one field that differs between identical runs.
    pub wall_s: Option<f64>,
    /// Wall time of the measured phase alone.
    pub measured_wall_s: Option<f64>,
    pub verified: bool,
    pub interrupted: bool,
    /// Fraction of the measured phase that ran (1.0 unless interrupted).
    pub progress: f64,
    /// The victim policy chosen outside the simulator that ran in place of
    /// `gc.policy` (Python's `victim=`); absent when `gc.policy` decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub victim_policy: Option<String>,
    /// The placement function given to the run that placed host writes under
    /// `ftl.placement = "python:K"` (Python's `placement=`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
}

/// Everything a run produced.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    /// Flash programs ÷ host page writes of the measured phase; `null` when the run
    /// wrote nothing (read-only traces): undefined, not 0.
    pub waf: Option<f64>,
    pub host: HostStats,
    pub flash: FlashStats,
    pub gc: GcStats,
    /// The FTL that ran and its own traffic (merges, cached-mapping lookups).
    pub ftl: FtlReport,
    /// I/O execution time of 004, s: every flash program, erase and non-host read
    /// at its configured latency, plus DRAM reads of pages taken from the write
    /// buffer; host reads left out. Counted in counting mode too.
    pub io_time_s: f64,
    pub wear: Wear,
    pub device: DeviceInfo,
    /// Simulated elapsed time of the measured phase; `null` in counting mode.
    pub elapsed_s: Option<f64>,
    /// Request latency percentiles; `null` in counting mode.
    pub latency: Option<LatencyReport>,
    /// Requests and bytes per simulated second; `null` in counting mode.
    pub throughput: Option<Throughput>,
    /// GC busy time and resource utilisation; `null` in counting mode.
    pub timing: Option<TimingSummary>,
    /// For trace replays: records read, skipped and remapped; `null` otherwise.
    pub trace: Option<crate::workload::TraceInfo>,
    /// The host model (`host.cache` / `host.threads`): the application's view, the
    /// buffer cache and the notification channel; `null` without it. With it,
    /// `latency` is the device command latency and `elapsed_s` the application's.
    pub app: Option<AppReport>,
    pub cache: Option<CacheReport>,
    pub notify: Option<NotifyReport>,
    pub series: Vec<SeriesPoint>,
    pub precondition: PhaseReport,
    /// Whether the measured phase reached steady state, and the evidence.
    pub steady_state: crate::steady::SteadyState,
    pub run: RunInfo,
    /// Content-aware flash (dead-value pool, dedup); `null` when `content` is off.
    pub content: Option<crate::content::ContentReport>,
    /// The device write buffer (`device.buffer`); `null` without one.
    pub buffer: Option<crate::device::BufferReport>,
    /// The host write buffer of block requests (`host.buffer`); `null` without one.
    /// With it, `notify` reports the channel.
    pub host_buffer: Option<crate::device::BufferReport>,
    /// Retention refresh and restarts; `null` when the device keeps no clock
    /// (no fast-write blocks, no normal retention, no restarts).
    pub refresh: Option<RefreshReport>,
    /// Power losses (`device.restart_at`, `device.power_loss_every`); `null` when
    /// neither is set.
    pub power_loss: Option<PowerLossReport>,
    /// The file systems of an `fs:` workload (002); `null` for other workloads.
    pub fs: Option<crate::fs::FsReport>,
    /// `gc.policy = "oracle"`: its horizon and the zombie marks it gave; `null` with
    /// any other policy.
    pub oracle: Option<OracleReport>,
    /// Host-directed placement (`fdp.enabled`): per handle, the statistics log and
    /// events; `null` when FDP is off.
    pub fdp: Option<FdpReport>,
    /// `gc.zombie_weight = "lifetime"`: what the device learnt of its zombies'
    /// lifetimes; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zombie_weight: Option<ZombieWeightReport>,
    /// `ftl.placement = "midas"`: the groups in force at the end (FIFO group sizes in
    /// blocks), the WAF the model predicted for them, epochs closed and modelled;
    /// absent for placements that fit nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_model: Option<crate::placement::PlacementModel>,
    /// A placement other than the default, without FDP (`ftl.placement`): per stream,
    /// over the measured phase, what was written to it and reclaimed from it; absent
    /// otherwise (FDP reports its handles in `fdp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<StreamReport>>,
    /// A `flows:` workload: each flow's figures, its slowdown against running alone,
    /// and the fairness among them; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<FlowsReport>,
}

pub use crate::ftl::ZombieWeightReport;

/// The `oracle` policy's section: what it knew of the future and what it told the device.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OracleReport {
    /// Host page writes before its death at which a page is marked zombie
    /// (`gc.oracle_horizon`, or when that is 0 the default it resolved to: ¾ of the
    /// spare pages GC works with).
    pub horizon: u64,
    /// Host page writes and trimmed pages of the measured phase the pre-pass recorded.
    pub future_writes: u64,
    pub future_trims: u64,
    /// Zombie marks given to the device (`Device::hint_zombie`).
    pub hints: u64,
    /// Bytes its future list and heap held at the end.
    pub memory_bytes: u64,
    /// With `gc.oracle_score = "best"`: the schedule whose run this report is, and every
    /// schedule tried with its WAF (the oracle is the best of them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<OracleCandidate>,
}

/// One schedule the oracle's envelope tried.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OracleCandidate {
    /// `greedy`, `cost-benefit (modified-time)`, `z-greedy@H`, `z-cost-benefit@H (...)`.
    pub schedule: String,
    pub waf: Option<f64>,
}

impl Report {
    /// Counter sections of a report from the measured phase's counters.
    pub(crate) fn sections(c: &Counters) -> (HostStats, FlashStats, GcStats) {
        (
            HostStats {
                requests: c.host_requests,
                write_pages: c.host_write_pages,
                read_pages: c.host_read_pages,
                trim_pages: c.host_trim_pages,
                read_unmapped_pages: c.host_read_unmapped,
            },
            FlashStats {
                programs: c.programs.total(),
                programs_by_cause: c.programs,
                reads: c.reads.total(),
                reads_by_cause: c.reads,
                erases: c.erases.total(),
                erases_by_cause: c.erases,
            },
            GcStats {
                invocations: c.gc_invocations,
                victims: c.gc_victims,
                pages_copied: c.gc_pages_copied,
                copies_per_victim: if c.gc_victims == 0 {
                    0.0
                } else {
                    c.gc_pages_copied as f64 / c.gc_victims as f64
                },
                background_victims: c.gc_background_victims,
                zombie_pages_copied: c.gc_zombie_pages_copied,
                copied_by_state: CopiedByState {
                    live: c.gc_copied_by_state[0],
                    host_shadow: c.gc_copied_by_state[1],
                    device_shadow: c.gc_copied_by_state[2],
                    twin_shadow: c.gc_copied_by_state[3],
                },
                buffer_reads: c.gc_buffer_reads,
                fast_programs: c.gc_fast_programs,
                skipped: c.gc_skipped,
                latency_s: c.gc_latency_ns as f64 / 1e9,
            },
        )
    }

    /// The report as pretty JSON (keys in schema order; deterministic).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports serialize")
    }
}
