//! Content-aware flash (001): fingerprints, the dead-value pool, deduplication.
//!
//! ```text
//!  write(L, value) ──► hash (content.hash_us) ──► old copy of L dies ──► pooled (value → dead PPNs)
//!        │
//!        ├─ dedup on and value live at P?  ──► map L to P, refcount+1          (no program)
//!        ├─ value in the dead-value pool?  ──► revive a dead PPN, map L to it  (no program)
//!        └─ otherwise                      ──► program a new page
//! ```
//!
//! Every written page may carry a 64-bit fingerprint of its content (traces carry a
//! hash per 4 KiB; the `values` workload draws them). A page *dies* when no logical
//! page maps to it any more (overwrite or trim; with dedup, when its reference count
//! reaches 0). Its value stays on flash until GC erases the block, so a later write of
//! the same value can *revive* it: the mapping points at the dead page again, the page
//! is valid again, nothing is programmed. Which dead pages are remembered is the pool
//! policy's business ([`pool`]); deduplication ([`dedup`]) shares one live page among
//! all logical pages holding its value.
//!
//! Popularity (001 §IV-C): the mapping table keeps an 8-bit counter per logical page —
//! the number of writes of the value it holds, as far as the device knows: 1 for a
//! value seen for the first time, the pool entry's count + 1 on a revival, the shared
//! page's count + 1 on a dedup hit. A dying page hands its count to the pool entry.
//!
//! The FTL side (mapping, revival, GC moves of shared pages) lives in
//! `ftl::page_mapped::content`; this module holds the data structures and the
//! report section. [`analyze`] is the trace analysis of 001 §II, independent of any FTL.

pub mod analyze;
pub mod dedup;
pub mod pool;
pub mod table;

pub use dedup::Sharing;
pub use pool::{degree, DeadValuePool, PoolCounters, MAX_POPULARITY};
pub use table::FpMap;

use serde::Serialize;

/// Popularity degrees reported (`floor(log2(popularity + 1))`, 0 ..= 8).
pub const DEGREES: usize = 9;

/// Counters of content-aware writes (measured phase and preconditioning alike; the
/// report takes differences).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContentCounters {
    /// Host page writes that carried a fingerprint.
    pub valued_writes: u64,
    /// Pages fingerprinted by the device (valued writes with content awareness on).
    pub hashed_pages: u64,
    /// Writes served by reviving a dead page (no program).
    pub revived: u64,
    /// Writes served by mapping to a live page holding the value (no program).
    pub deduplicated: u64,
    /// Pool lookups that found no dead page for the value.
    pub pool_misses: u64,
    /// Pool lookups by the degree of the value's popularity before the write
    /// (exact count of earlier writes of the value, capped at 255).
    pub hits_by_degree: [u64; DEGREES],
    pub misses_by_degree: [u64; DEGREES],
    pub pool: PoolCounters,
}

impl ContentCounters {
    /// `self − earlier`, field by field.
    pub fn since(&self, e: &ContentCounters) -> ContentCounters {
        let arr = |a: [u64; DEGREES], b: [u64; DEGREES]| std::array::from_fn(|i| a[i] - b[i]);
        ContentCounters {
            valued_writes: self.valued_writes - e.valued_writes,
            hashed_pages: self.hashed_pages - e.hashed_pages,
            revived: self.revived - e.revived,
            deduplicated: self.deduplicated - e.deduplicated,
            pool_misses: self.pool_misses - e.pool_misses,
            hits_by_degree: arr(self.hits_by_degree, e.hits_by_degree),
            misses_by_degree: arr(self.misses_by_degree, e.misses_by_degree),
            pool: PoolCounters {
                inserted_pages: self.pool.inserted_pages - e.pool.inserted_pages,
                evicted_entries: self.pool.evicted_entries - e.pool.evicted_entries,
                evicted_pages: self.pool.evicted_pages - e.pool.evicted_pages,
                erased_pages: self.pool.erased_pages - e.pool.erased_pages,
                promotions: self.pool.promotions - e.pool.promotions,
                demotions: self.pool.demotions - e.pool.demotions,
            },
        }
    }
}

/// State of the content layer at the end of a run (not differenced).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContentGauges {
    pub pool_entries: u64,
    pub pool_entries_peak: u64,
    pub pool_pages: u64,
    /// Physical pages mapped by more than one logical page (dedup).
    pub shared_pages: u64,
    /// Logical pages mapped to a page another logical page also maps to (dedup).
    pub shared_mappings: u64,
    /// Simulator bytes the content layer holds.
    pub state_bytes: u64,
}

/// One popularity degree's pool lookups.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DegreeStats {
    pub degree: u32,
    /// Earlier writes of the value, lowest of the degree (`2^degree − 1`).
    pub popularity_from: u32,
    pub hits: u64,
    pub misses: u64,
    pub hit_rate: f64,
}

/// The report's `content` section.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ContentReport {
    /// `content.pool` (`none`, `lru`, `mq`, `infinite`, `lx`).
    pub pool: String,
    pub dedup: bool,
    /// Host page writes that carried a fingerprint.
    pub valued_write_pages: u64,
    pub hashed_pages: u64,
    /// Host page writes served without a program (revival + dedup).
    pub writes_avoided: u64,
    pub writes_avoided_revival: u64,
    pub writes_avoided_dedup: u64,
    /// `writes_avoided / host.write_pages`.
    pub writes_avoided_fraction: f64,
    pub pool_hits: u64,
    pub pool_misses: u64,
    pub pool_hit_rate: f64,
    pub pool_hits_by_degree: Vec<DegreeStats>,
    pub pool_inserted_pages: u64,
    pub pool_evicted_entries: u64,
    pub pool_evicted_pages: u64,
    pub pool_erased_pages: u64,
    pub mq_promotions: u64,
    pub mq_demotions: u64,
    /// Entries in the pool at the end and at most.
    pub pool_entries: u64,
    pub pool_entries_peak: u64,
    pub pool_pages: u64,
    /// Device DRAM the pool needs at its peak: entries × `content.entry_bytes`.
    pub pool_memory_bytes: u64,
    pub dedup_shared_pages: u64,
    pub dedup_shared_mappings: u64,
    pub state_bytes: u64,
}

fn rate(hits: u64, misses: u64) -> f64 {
    if hits + misses == 0 {
        0.0
    } else {
        hits as f64 / (hits + misses) as f64
    }
}

impl ContentReport {
    /// The section from the measured phase's counters and the end-of-run gauges.
    pub fn new(
        cfg: &crate::config::ContentConfig,
        c: &ContentCounters,
        g: &ContentGauges,
        host_write_pages: u64,
    ) -> ContentReport {
        let avoided = c.revived + c.deduplicated;
        ContentReport {
            pool: cfg.pool.to_string(),
            dedup: cfg.dedup,
            valued_write_pages: c.valued_writes,
            hashed_pages: c.hashed_pages,
            writes_avoided: avoided,
            writes_avoided_revival: c.revived,
            writes_avoided_dedup: c.deduplicated,
            writes_avoided_fraction: if host_write_pages == 0 {
                0.0
            } else {
                avoided as f64 / host_write_pages as f64
            },
            pool_hits: c.revived,
            pool_misses: c.pool_misses,
            pool_hit_rate: rate(c.revived, c.pool_misses),
            pool_hits_by_degree: (0..DEGREES)
                .filter(|&d| c.hits_by_degree[d] + c.misses_by_degree[d] > 0)
                .map(|d| DegreeStats {
                    degree: d as u32,
                    popularity_from: (1u32 << d) - 1,
                    hits: c.hits_by_degree[d],
                    misses: c.misses_by_degree[d],
                    hit_rate: rate(c.hits_by_degree[d], c.misses_by_degree[d]),
                })
                .collect(),
            pool_inserted_pages: c.pool.inserted_pages,
            pool_evicted_entries: c.pool.evicted_entries,
            pool_evicted_pages: c.pool.evicted_pages,
            pool_erased_pages: c.pool.erased_pages,
            mq_promotions: c.pool.promotions,
            mq_demotions: c.pool.demotions,
            pool_entries: g.pool_entries,
            pool_entries_peak: g.pool_entries_peak,
            pool_pages: g.pool_pages,
            pool_memory_bytes: g.pool_entries_peak * cfg.entry_bytes as u64,
            dedup_shared_pages: g.shared_pages,
            dedup_shared_mappings: g.shared_mappings,
            state_bytes: g.state_bytes,
        }
    }
}
