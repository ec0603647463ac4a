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

use super::{BlockStats, BucketIndex, SelectCtx, VictimPolicy};

/// Popularity-aware greedy for one GC unit.
#[derive(Clone)]
pub struct Popularity {
    index: BucketIndex,
    pages_per_block: u32,
}

impl Popularity {
    pub fn new(first_block: u32, blocks: u32, pages_per_block: u32) -> Self {
        Popularity {
            index: BucketIndex::new(first_block, blocks, pages_per_block + pages_per_block / 2),
            pages_per_block,
        }
    }

    #[inline]
    fn key(&self, stats: &BlockStats) -> u32 {
        let invalid = self.pages_per_block - stats.valid;
        stats.valid + stats.weight().min(invalid / 2)
    }
}

impl VictimPolicy for Popularity {
    fn insert(&mut self, stats: &BlockStats) {
        let key = self.key(stats);
        self.index.insert(stats.block, key);
    }

    #[inline]
    fn changed(&mut self, stats: &BlockStats) {
        let key = self.key(stats);
        self.index.update(stats.block, key);
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
        let mut weights = vec![0u32; 8];
        // Both blocks closed with 0 valid pages in `flash` terms; set counts by hand.
        p.index.insert(1, ppb);
        p.index.insert(2, ppb);
        p.changed(&BlockStats::new(1, ppb - 10, &flash, &weights));
        p.changed(&BlockStats::new(2, ppb - 8, &flash, &weights));
        // Block 1 has more invalid pages, but its dead pages are popular.
        weights[1] = 6;
        p.changed(&BlockStats::new(1, ppb - 10, &flash, &weights));
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut ctx = SelectCtx {
            flash: &flash,
            now: 0,
            rng: &mut rng,
            chain: &[],
        };
        assert_eq!(p.select(&mut ctx), Some(2));
        // The cap: a weight can cost at most half the invalid pages.
        weights[1] = 1000;
        let stats = BlockStats::new(1, ppb - 10, &flash, &weights);
        p.changed(&stats);
        assert_eq!(p.key(&stats), ppb - 10 + 5);
        assert_eq!(p.select(&mut ctx), Some(1));
    }
}
