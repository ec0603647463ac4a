//! The `fdp` section: what an FDP device did per reclaim-unit handle over the measured
//! phase, its statistics log and its events (`fdp.enabled`; `null` otherwise).
//!
//! A handle's WAF is `(host pages + pages GC copied out of its RUs) / host pages`: the
//! flash writes its own data caused. Under initial isolation those copies land in the
//! reclaim group's shared GC pool (a line of `gc_pools`, with what GC then moved out
//! of the pool again); under persistent isolation in the handle's own GC RUs.

use crate::config::{Config, FtlLayout, Geometry, Isolation};
use crate::error::Result;
use crate::ftl::FdpCounts;
use crate::stats::Counters;
use serde::Serialize;

/// One reclaim-unit handle.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HandleReport {
    /// Its placement identifier (`reclaim_group · handles + handle`).
    pub placement_id: u32,
    pub reclaim_group: u32,
    pub handle: u32,
    /// Host pages written to the handle.
    pub host_pages: u64,
    /// Valid pages GC copied out of the handle's RUs (host RUs and, persistently
    /// isolated, its own GC RUs).
    pub relocated_pages: u64,
    /// The handle's RUs GC erased.
    pub erased_rus: u64,
    /// `(host + relocated) / host`; `null` when the handle wrote nothing.
    pub waf: Option<f64>,
}

/// A reclaim group's shared GC destination (initial isolation).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PoolReport {
    pub reclaim_group: u32,
    /// Pages GC copied into the pool.
    pub pages: u64,
    /// Valid pages GC copied out of the pool's RUs again.
    pub relocated_pages: u64,
    pub erased_rus: u64,
}

/// The FDP statistics log, over the measured phase.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FdpLog {
    pub host_bytes_with_metadata_written: u64,
    pub media_bytes_with_metadata_written: u64,
    pub media_bytes_erased: u64,
}

/// FDP events, over the measured phase.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FdpEvents {
    /// Reclaims of an RU that had valid data to move.
    pub media_relocated: u64,
    /// Writes whose placement identifier named no handle (placed on handle 0 of
    /// reclaim group 0).
    pub invalid_placement_identifier: u64,
    /// RUs closed before they were full (none: an RU is closed when full).
    pub ru_not_fully_written: u64,
}

/// The `fdp` section.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FdpReport {
    pub isolation: Isolation,
    pub reclaim_groups: u32,
    pub handles_per_group: u32,
    /// Bytes of one reclaim unit.
    pub ru_bytes: u64,
    pub handles: Vec<HandleReport>,
    /// Initial isolation's GC pools (empty when persistently isolated).
    pub gc_pools: Vec<PoolReport>,
    pub log: FdpLog,
    pub events: FdpEvents,
}

impl FdpReport {
    /// Of a run with `cfg` on `geo`: its measured counters and what the device
    /// counted per stream since preconditioning ended.
    pub(crate) fn new(
        cfg: &Config,
        geo: &Geometry,
        measured: &Counters,
        counts: &FdpCounts,
    ) -> Result<Option<FdpReport>> {
        let Some(l) = FtlLayout::new(cfg, geo)?.fdp else {
            return Ok(None);
        };
        let s = |i: u32| counts.streams[i as usize];
        let mut handles = Vec::new();
        let mut gc_pools = Vec::new();
        for g in 0..l.reclaim_groups {
            let first = g * l.streams_per_rg;
            for h in 0..l.handles {
                let host = s(first + h);
                let own_gc = match l.isolation {
                    Isolation::Persistent => s(first + l.handles + h),
                    Isolation::Initial | Isolation::InitialLastHandle => Default::default(),
                };
                let relocated = host.relocated_pages + own_gc.relocated_pages;
                handles.push(HandleReport {
                    placement_id: g * l.handles + h,
                    reclaim_group: g,
                    handle: h,
                    host_pages: host.host_pages,
                    relocated_pages: relocated,
                    erased_rus: host.erased_rus + own_gc.erased_rus,
                    waf: (host.host_pages > 0)
                        .then(|| (host.host_pages + relocated) as f64 / host.host_pages as f64),
                });
            }
            if l.isolation == Isolation::Initial {
                let pool = s(first + l.handles);
                gc_pools.push(PoolReport {
                    reclaim_group: g,
                    pages: pool.gc_pages,
                    relocated_pages: pool.relocated_pages,
                    erased_rus: pool.erased_rus,
                });
            }
        }
        let page = geo.page_size;
        let block = page * geo.pages_per_block as u64;
        Ok(Some(FdpReport {
            isolation: l.isolation,
            reclaim_groups: l.reclaim_groups,
            handles_per_group: l.handles,
            ru_bytes: block * l.ru_planes as u64,
            handles,
            gc_pools,
            log: FdpLog {
                host_bytes_with_metadata_written: measured.host_write_pages * page,
                media_bytes_with_metadata_written: measured.programs.total() * page,
                media_bytes_erased: measured.erases.total() * block,
            },
            events: FdpEvents {
                media_relocated: counts.streams.iter().map(|c| c.relocation_events).sum(),
                invalid_placement_identifier: counts.invalid_placement_ids,
                ru_not_fully_written: 0,
            },
        }))
    }
}
