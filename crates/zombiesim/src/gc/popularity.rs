//! Popularity-aware victim selection (001 §IV-D): greedy, but a block whose dead pages
//! hold popular values still in the dead-value pool looks fuller than it is, so GC
//! erases popular dead values later and the pool can revive them.
//!
//! The content layer gives every block a *weight*: the sum over its pooled dead pages
//! of `floor(log2(popularity + 1)) − 1` (0 for a value written once, 1 for 3–6 writes,
//! …). A candidate is keyed by `v + min(w, i/2)` (`v` valid pages, `i` invalid, `w`
//! weight) and the lowest key wins, ties to the lowest block. The cap `i/2` (as in
//! z-greedy) bounds the price: a chosen block never has fewer than half the invalid
//! pages of the plain greedy choice. With no pool every weight is 0 and this is greedy.
//! Keys live in a [`BucketIndex`], so updates are O(1).

use super::{BucketIndex, SelectCtx, VictimPolicy};
use crate::flash::FlashState;

/// Popularity-aware greedy for one GC unit.
pub struct Popularity {
    index: BucketIndex,
    first_block: u32,
    pages_per_block: u32,
    /// Weight of every block of the unit (candidates or not).
    weight: Vec<u32>,
}

impl Popularity {
    pub fn new(first_block: u32, blocks: u32, pages_per_block: u32) -> Self {
        Popularity {
            index: BucketIndex::new(first_block, blocks, pages_per_block + pages_per_block / 2),
            first_block,
            pages_per_block,
            weight: vec![0; blocks as usize],
        }
    }

    #[inline]
    fn key(&self, block: u32, valid: u32) -> u32 {
        let w = self.weight[(block - self.first_block) as usize];
        let invalid = self.pages_per_block - valid;
        valid + w.min(invalid / 2)
    }
}

impl VictimPolicy for Popularity {
    fn insert(&mut self, block: u32, flash: &FlashState) {
        let key = self.key(block, flash.valid_count[block as usize]);
        self.index.insert(block, key);
    }

    #[inline]
    fn invalidated(&mut self, block: u32, valid: u32) {
        let key = self.key(block, valid);
        self.index.update(block, key);
    }

    fn reweighed(&mut self, block: u32, valid: u32, weight: u32) {
        self.weight[(block - self.first_block) as usize] = weight;
        let key = self.key(block, valid);
        self.index.update(block, key);
    }

    fn select(&mut self, _ctx: &mut SelectCtx) -> Option<u32> {
        self.index.pop_min()
    }

    fn len(&self) -> usize {
        self.index.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn popular_dead_pages_keep_a_block_back() {
        let flash = crate::flash::FlashState::new(
            &crate::flash::Geometry::new(&crate::Config::preset("default").unwrap()).unwrap(),
        );
        let ppb = flash.pages_per_block();
        let mut p = Popularity::new(0, 8, ppb);
        // Both blocks closed with 0 valid pages in `flash` terms; set counts by hand.
        p.index.insert(1, ppb);
        p.index.insert(2, ppb);
        p.invalidated(1, ppb - 10);
        p.invalidated(2, ppb - 8);
        // Block 1 has more invalid pages, but its dead pages are popular.
        p.reweighed(1, ppb - 10, 6);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut ctx = SelectCtx {
            flash: &flash,
            now: 0,
            rng: &mut rng,
        };
        assert_eq!(p.select(&mut ctx), Some(2));
        // The cap: a weight can cost at most half the invalid pages.
        p.reweighed(1, ppb - 10, 1000);
        assert_eq!(p.key(1, ppb - 10), ppb - 10 + 5);
        assert_eq!(p.select(&mut ctx), Some(1));
    }
}
