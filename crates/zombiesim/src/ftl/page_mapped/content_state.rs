//! The content layer's state (model: `crate::content`): each physical page's
//! fingerprint, the values' popularity, the dead-value pool and the dedup sharing
//! table, with what they cost in memory. The page-mapped FTL's content-aware write
//! path and GC hooks (`content.rs`) keep it consistent.

use crate::config::{Config, PoolPolicy};
use crate::content::{ContentCounters, DeadValuePool, FpMap, Sharing};

/// A page's `value` when its content is unknown: the one sentinel of the device's
/// commands and buffers too.
pub(super) use crate::ftl::NO_VALUE;
/// A written fingerprint equal to the sentinel is stored as this.
pub(super) const SENTINEL_STANDIN: u64 = 0x5a5a_5a5a_5a5a_5a5a;

/// The content layer's state, kept by the FTL when `content` is enabled.
#[derive(Clone)]
pub(super) struct ContentState {
    pub(super) pool_policy: PoolPolicy,
    /// Fingerprint of each physical page's content (`NO_VALUE` if unknown).
    pub(super) value: Vec<u64>,
    /// Per logical page: popularity of the value it holds (8 bits, saturating).
    pub(super) popularity: Vec<u8>,
    /// Per physical page: the weight it added to its block when pooled.
    pub(super) weight: Vec<u8>,
    /// Per block: summed weight of its pooled dead pages (popularity-aware GC).
    pub(super) block_weight: Vec<u32>,
    pub(super) pool: Option<DeadValuePool>,
    pub(super) sharing: Option<Sharing>,
    /// Exact earlier writes per value (for hit rates by popularity degree).
    pub(super) seen: FpMap<u32>,
    /// Pages an eviction released (reused buffer).
    pub(super) released: Vec<u32>,
    pub(super) hash_ns: u64,
    /// When the hashing engine is free again (ns).
    pub(super) hash_free: u64,
    pub(super) counters: ContentCounters,
}

impl ContentState {
    pub(super) fn new(cfg: &Config, logical: u64, physical: u64, blocks: u32) -> Self {
        let c = &cfg.content;
        ContentState {
            pool_policy: c.pool,
            value: vec![NO_VALUE; physical as usize],
            popularity: vec![0; logical as usize],
            weight: vec![0; physical as usize],
            block_weight: vec![0; blocks as usize],
            pool: (c.pool != PoolPolicy::None)
                .then(|| DeadValuePool::new(c.pool, c.pool_entries, c.mq_queues, physical)),
            sharing: c.dedup.then(|| Sharing::new(logical, physical)),
            seen: FpMap::default(),
            released: Vec::new(),
            hash_ns: (c.hash_us * 1000.0).round() as u64,
            hash_free: 0,
            counters: ContentCounters::default(),
        }
    }

    pub(super) fn counters(&self) -> ContentCounters {
        let mut c = self.counters;
        if let Some(p) = &self.pool {
            c.pool = p.counters;
        }
        c
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.value.len() * 9
            + self.popularity.len()
            + self.block_weight.len() * 4
            + self.pool.as_ref().map_or(0, |p| p.memory_bytes())
            + self.sharing.as_ref().map_or(0, |s| s.memory_bytes())
            + self.seen.capacity() * 16
    }

    /// A logical page was read (`lx` refreshes the page's pool entry).
    #[inline]
    pub(super) fn on_read(&mut self, lpn: usize) {
        if self.pool_policy == PoolPolicy::Lx {
            if let Some(p) = &mut self.pool {
                p.touch(lpn as u64);
            }
        }
    }

    /// Timing restarts at 0 (the measured phase).
    pub(super) fn reset_time(&mut self) {
        self.hash_free = 0;
    }
}

/// The weights of pooled dead pages per block, for [`crate::gc::BlockStats`] (empty
/// without the content layer).
#[inline]
pub(super) fn block_weights(content: Option<&ContentState>) -> &[u32] {
    content.map_or(&[], |c| c.block_weight.as_slice())
}
