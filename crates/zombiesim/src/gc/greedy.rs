//! Greedy: reclaim the block with the fewest valid pages (most invalid), O(1) per update.

use super::{BlockStats, BucketIndex, SelectCtx, VictimPolicy};

/// Greedy victim selection over a [`BucketIndex`] keyed by valid count.
#[derive(Clone)]
pub struct Greedy {
    index: BucketIndex,
}

impl Greedy {
    pub fn new(first_block: u32, blocks: u32, pages_per_block: u32) -> Self {
        Greedy {
            index: BucketIndex::new(first_block, blocks, pages_per_block),
        }
    }
}

impl VictimPolicy for Greedy {
    fn insert(&mut self, stats: &BlockStats) {
        self.index.insert(stats.block, stats.valid);
    }

    #[inline]
    fn changed(&mut self, stats: &BlockStats) {
        self.index.update(stats.block, stats.valid);
    }

    fn select(&mut self, _ctx: &mut SelectCtx) -> Option<u32> {
        self.index.pop_min()
    }

    fn len(&self) -> usize {
        self.index.len()
    }
}
