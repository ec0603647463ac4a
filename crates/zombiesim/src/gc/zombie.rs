//! Zombie-aware victim selection (000 §3.2, 003 §2.2).
//!
//! A zombie page is valid on flash, but its logical page has a dirty newer copy in the
//! host buffer, so it will die soon. Copying it now is wasted work; a block rich in
//! zombies will be cheap to reclaim later. With `i` invalid and `z` zombie pages:
//!
//! ```text
//!   z-greedy score = i − min(z, i/2)        (000 eq. 2)
//! ```
//!
//! The cap `min(z, i/2)` keeps a block with fewer than half the invalid pages of the
//! zombie-rich one from winning. [`ZGreedy`] keeps blocks in a [`BucketIndex`] keyed by
//! `2n − 2·score` (integers, the best block has the lowest key), so it stays O(1) per
//! update like greedy; with no zombies the keys are `2v` and it picks exactly what greedy
//! picks. z-cost-benefit is [`super::CostBenefit`] with zombies counted.
//!
//! [`GreedyDelay`] (003's strawman): greedy, but blocks whose zombie share of valid pages
//! exceeds a threshold are skipped while any other candidate exists.

use super::{BlockStats, BucketIndex, SelectCtx, VictimPolicy};

/// `2n − 2·(i − min(z, i/2))` = `2v + min(2z, i)`: lower is better.
#[inline]
pub fn z_greedy_key(pages_per_block: u32, valid: u32, zombies: u32) -> u32 {
    let invalid = pages_per_block - valid;
    2 * valid + (2 * zombies).min(invalid)
}

/// How a zombie-aware policy keys a candidate block by its valid and known-zombie
/// counts in its bucket index (lower keys are taken first).
pub trait ZombieKey: Send + Clone {
    /// The largest key.
    fn max_key(&self) -> u32;
    fn key(&self, valid: u32, zombies: u32) -> u32;
}

/// z-greedy's key, `2v + min(2z, i)`.
#[derive(Clone)]
pub struct ZGreedyKey {
    pages_per_block: u32,
}

impl ZombieKey for ZGreedyKey {
    fn max_key(&self) -> u32 {
        2 * self.pages_per_block
    }

    #[inline]
    fn key(&self, valid: u32, zombies: u32) -> u32 {
        z_greedy_key(self.pages_per_block, valid, zombies)
    }
}

/// greedy-delay's key: `v` for blocks whose zombie share `z / v` is at most the
/// threshold, `n + 1 + v` for the delayed ones (after all others).
#[derive(Clone)]
pub struct DelayKey {
    pages_per_block: u32,
    /// Zombie share threshold, percent of valid pages.
    percent: u32,
}

impl ZombieKey for DelayKey {
    fn max_key(&self) -> u32 {
        2 * self.pages_per_block + 1
    }

    #[inline]
    fn key(&self, valid: u32, zombies: u32) -> u32 {
        let delayed = zombies as u64 * 100 > self.percent as u64 * valid as u64;
        if delayed {
            self.pages_per_block + 1 + valid
        } else {
            valid
        }
    }
}

/// A zombie-aware policy over a bucket index: O(1) per update like greedy; ties go to
/// the lowest block number.
#[derive(Clone)]
pub struct ZombieKeyed<K: ZombieKey> {
    index: BucketIndex,
    key: K,
}

/// z-greedy (000 eq. 2).
pub type ZGreedy = ZombieKeyed<ZGreedyKey>;

/// Greedy that delays zombie-rich blocks (003 §2.2): among blocks whose zombie share
/// `z / v` is at most the threshold, the one with the fewest valid pages; if there is
/// none, plain greedy.
pub type GreedyDelay = ZombieKeyed<DelayKey>;

impl ZGreedy {
    pub fn new(first_block: u32, blocks: u32, pages_per_block: u32) -> Self {
        ZombieKeyed::with_key(first_block, blocks, ZGreedyKey { pages_per_block })
    }
}

impl GreedyDelay {
    pub fn new(first_block: u32, blocks: u32, pages_per_block: u32, percent: u32) -> Self {
        let key = DelayKey {
            pages_per_block,
            percent,
        };
        ZombieKeyed::with_key(first_block, blocks, key)
    }
}

impl<K: ZombieKey> ZombieKeyed<K> {
    fn with_key(first_block: u32, blocks: u32, key: K) -> Self {
        ZombieKeyed {
            index: BucketIndex::new(first_block, blocks, key.max_key()),
            key,
        }
    }
}

impl<K: ZombieKey> VictimPolicy for ZombieKeyed<K> {
    fn insert(&mut self, stats: &BlockStats) {
        let (v, z) = (stats.valid, stats.zombies());
        self.index.insert(stats.block, self.key.key(v, z));
    }

    #[inline]
    fn changed(&mut self, stats: &BlockStats) {
        self.index
            .update(stats.block, self.key.key(stats.valid, stats.zombies()));
    }

    fn select(&mut self, _ctx: &mut SelectCtx) -> Option<u32> {
        self.index.pop_min()
    }

    fn len(&self) -> usize {
        self.index.len()
    }
}
