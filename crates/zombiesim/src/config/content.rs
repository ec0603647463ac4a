//! `[content]`: content-aware flash — the dead-value pool and deduplication (001).
//!
//! Off by default (`pool = "none"`, `dedup = false`): the FTL then ignores the content
//! fingerprints a workload carries, and charges no hashing time.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which dead-value pool the FTL keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolPolicy {
    /// No pool: a dead page is garbage.
    None,
    /// One LRU queue of dead values, `pool_entries` long.
    Lru,
    /// Multi-queue by value popularity with expiry (001 §IV), `pool_entries` long.
    Mq,
    /// Every dead value is remembered until its block is erased (001's Ideal).
    Infinite,
    /// LX-SSD (001's prior work [20]): dead pages remembered per logical address, LRU by
    /// the address's recency (reads and writes); revives only a rewrite of the same address.
    Lx,
}

impl PoolPolicy {
    pub const ALL: [PoolPolicy; 5] = [
        PoolPolicy::None,
        PoolPolicy::Lru,
        PoolPolicy::Mq,
        PoolPolicy::Infinite,
        PoolPolicy::Lx,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PoolPolicy::None => "none",
            PoolPolicy::Lru => "lru",
            PoolPolicy::Mq => "mq",
            PoolPolicy::Infinite => "infinite",
            PoolPolicy::Lx => "lx",
        }
    }
}

impl fmt::Display for PoolPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The `[content]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContentConfig {
    /// Dead-value pool policy.
    pub pool: PoolPolicy,
    /// Pool capacity in entries (distinct dead values; logical pages for `lx`).
    pub pool_entries: u64,
    /// Number of LRU queues of the `mq` pool.
    pub mq_queues: u32,
    /// CAFTL-style deduplication: a write of a value already live maps to it.
    pub dedup: bool,
    /// Time to fingerprint one page on the write path (timing mode), µs.
    pub hash_us: f64,
    /// Bytes of device DRAM one pool entry takes (for the reported pool memory;
    /// 001: 200 K entries ≈ 5 MB).
    pub entry_bytes: u32,
}

impl Default for ContentConfig {
    fn default() -> Self {
        ContentConfig {
            pool: PoolPolicy::None,
            pool_entries: 200_000,
            mq_queues: 8,
            dedup: false,
            hash_us: 12.0,
            entry_bytes: 25,
        }
    }
}

impl ContentConfig {
    /// Whether the FTL looks at content at all.
    pub fn enabled(&self) -> bool {
        self.dedup || self.pool != PoolPolicy::None
    }

    /// Check the section; errors name the key.
    pub fn validate(&self) -> Result<()> {
        let bounded = matches!(self.pool, PoolPolicy::Lru | PoolPolicy::Mq | PoolPolicy::Lx);
        if bounded && self.pool_entries == 0 {
            return Err(Error::config(
                "content.pool_entries",
                format!("must be at least 1 with content.pool = \"{}\"", self.pool),
            ));
        }
        if self.pool_entries >= u32::MAX as u64 {
            return Err(Error::config(
                "content.pool_entries",
                format!("{}: must be below 2^32 - 1", self.pool_entries),
            ));
        }
        if !(1..=32).contains(&self.mq_queues) {
            return Err(Error::config(
                "content.mq_queues",
                format!("{}: must be in [1, 32]", self.mq_queues),
            ));
        }
        if !(self.hash_us.is_finite() && self.hash_us >= 0.0) {
            return Err(Error::config(
                "content.hash_us",
                format!("{}: must be a non-negative number", self.hash_us),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_name_their_key() {
        let c = ContentConfig {
            pool: PoolPolicy::Lru,
            pool_entries: 0,
            ..ContentConfig::default()
        };
        assert!(
            matches!(c.validate(), Err(Error::Config { key, .. }) if key == "content.pool_entries")
        );
        let c = ContentConfig {
            mq_queues: 0,
            ..ContentConfig::default()
        };
        assert!(
            matches!(c.validate(), Err(Error::Config { key, .. }) if key == "content.mq_queues")
        );
        assert!(!ContentConfig::default().enabled());
    }
}
