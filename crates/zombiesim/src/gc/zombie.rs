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

use super::{BucketIndex, CandidateList, SelectCtx, VictimPolicy};
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
/// An exact scan, O(candidates) per selection.
pub struct GreedyDelay {
    candidates: CandidateList,
    /// Zombie share threshold, percent of valid pages.
    percent: u32,
    scored: u64,
}

impl GreedyDelay {
    pub fn new(first_block: u32, blocks: u32, percent: u32) -> Self {
        GreedyDelay {
            candidates: CandidateList::new(first_block, blocks),
            percent,
            scored: 0,
        }
    }
}

impl VictimPolicy for GreedyDelay {
    fn insert(&mut self, block: u32, _flash: &FlashState) {
        self.candidates.push(block);
    }

    fn invalidated(&mut self, _block: u32, _valid: u32) {}

    fn select(&mut self, ctx: &mut SelectCtx) -> Option<u32> {
        self.scored = self.candidates.len() as u64;
        // (delayed?, valid, block): the smallest tuple wins.
        let best = self
            .candidates
            .as_slice()
            .iter()
            .map(|&b| {
                let v = ctx.flash.valid_count[b as usize];
                let z = ctx.flash.zombies[b as usize];
                let delayed = z as u64 * 100 > self.percent as u64 * v as u64;
                (delayed, v, b)
            })
            .min()?;
        self.candidates.remove(best.2);
        Some(best.2)
    }

    fn len(&self) -> usize {
        self.candidates.len()
    }

    fn last_scored(&self) -> u64 {
        self.scored
    }
}
