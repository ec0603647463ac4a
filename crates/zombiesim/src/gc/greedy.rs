//! Greedy: reclaim the block with the fewest valid pages (most invalid), O(1) per update.

use super::{BucketIndex, SelectCtx, VictimPolicy};
use crate::flash::FlashState;

/// Greedy victim selection over a [`BucketIndex`] keyed by valid count.
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
    fn insert(&mut self, block: u32, flash: &FlashState) {
        self.index.insert(block, flash.valid_count[block as usize]);
    }

    #[inline]
    fn invalidated(&mut self, block: u32, valid: u32) {
        self.index.update(block, valid);
    }

    fn select(&mut self, _ctx: &mut SelectCtx) -> Option<u32> {
        self.index.pop_min()
    }

    fn len(&self) -> usize {
        self.index.len()
    }
}
