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

use super::{BucketIndex, SelectCtx, VictimPolicy};
use crate::flash::FlashState;

/// `2n − 2·(i − min(z, i/2))` = `2v + min(2z, i)`: lower is better.
#[inline]
pub fn z_greedy_key(pages_per_block: u32, valid: u32, zombies: u32) -> u32 {
    let invalid = pages_per_block - valid;
    2 * valid + (2 * zombies).min(invalid)
}

/// z-greedy over a bucket index, O(1) per update.
pub struct ZGreedy {
    index: BucketIndex,
    first_block: u32,
    pages_per_block: u32,
    /// Valid and zombie counts of the unit's blocks, as last told.
    valid: Vec<u32>,
    zombies: Vec<u32>,
}

impl ZGreedy {
    pub fn new(first_block: u32, blocks: u32, pages_per_block: u32) -> Self {
        ZGreedy {
            index: BucketIndex::new(first_block, blocks, 2 * pages_per_block),
            first_block,
            pages_per_block,
            valid: vec![0; blocks as usize],
            zombies: vec![0; blocks as usize],
        }
    }

    #[inline]
    fn rekey(&mut self, block: u32) {
        let local = (block - self.first_block) as usize;
        let key = z_greedy_key(self.pages_per_block, self.valid[local], self.zombies[local]);
        self.index.update(block, key);
    }
}

impl VictimPolicy for ZGreedy {
    fn insert(&mut self, block: u32, flash: &FlashState) {
        let local = (block - self.first_block) as usize;
        let (v, z) = (
            flash.valid_count[block as usize],
            flash.zombies[block as usize],
        );
        self.valid[local] = v;
        self.zombies[local] = z;
        self.index
            .insert(block, z_greedy_key(self.pages_per_block, v, z));
    }

    #[inline]
    fn invalidated(&mut self, block: u32, valid: u32) {
        self.valid[(block - self.first_block) as usize] = valid;
        self.rekey(block);
    }

    fn zombies_changed(&mut self, block: u32, valid: u32, zombies: u32) {
        let local = (block - self.first_block) as usize;
        self.valid[local] = valid;
        self.zombies[local] = zombies;
        self.rekey(block);
    }

    fn select(&mut self, _ctx: &mut SelectCtx) -> Option<u32> {
        self.index.pop_min()
    }

    fn len(&self) -> usize {
        self.index.len()
    }
}

/// Greedy that delays zombie-rich blocks: among blocks whose zombie share `z / v` is at
/// most `threshold`, the one with the fewest valid pages; if there is none, plain greedy.
/// One bucket index keyed by `v` for blocks that are not delayed and `n + 1 + v` for
/// those that are, so it is O(1) per update like greedy (ties: lowest block number).
pub struct GreedyDelay {
    index: BucketIndex,
    first_block: u32,
    pages_per_block: u32,
    /// Zombie share threshold, percent of valid pages.
    percent: u32,
    valid: Vec<u32>,
    zombies: Vec<u32>,
}

impl GreedyDelay {
    pub fn new(first_block: u32, blocks: u32, pages_per_block: u32, percent: u32) -> Self {
        GreedyDelay {
            index: BucketIndex::new(first_block, blocks, 2 * pages_per_block + 1),
            first_block,
            pages_per_block,
            percent,
            valid: vec![0; blocks as usize],
            zombies: vec![0; blocks as usize],
        }
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

    #[inline]
    fn rekey(&mut self, block: u32) {
        let local = (block - self.first_block) as usize;
        let key = self.key(self.valid[local], self.zombies[local]);
        self.index.update(block, key);
    }
}

impl VictimPolicy for GreedyDelay {
    fn insert(&mut self, block: u32, flash: &FlashState) {
        let local = (block - self.first_block) as usize;
        let (v, z) = (
            flash.valid_count[block as usize],
            flash.zombies[block as usize],
        );
        self.valid[local] = v;
        self.zombies[local] = z;
        let key = self.key(v, z);
        self.index.insert(block, key);
    }

    #[inline]
    fn invalidated(&mut self, block: u32, valid: u32) {
        self.valid[(block - self.first_block) as usize] = valid;
        self.rekey(block);
    }

    fn zombies_changed(&mut self, block: u32, valid: u32, zombies: u32) {
        let local = (block - self.first_block) as usize;
        self.valid[local] = valid;
        self.zombies[local] = zombies;
        self.rekey(block);
    }

    fn select(&mut self, _ctx: &mut SelectCtx) -> Option<u32> {
        self.index.pop_min()
    }

    fn len(&self) -> usize {
        self.index.len()
    }
}
