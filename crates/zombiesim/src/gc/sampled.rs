//! Policies that sample candidates at random: d-choices, and random victim
//! selection, which is d-choices with d = 1.

use super::{BlockStats, SelectCtx, VictimPolicy};
use crate::flash::NONE;
use rand::RngExt;

/// A set of blocks with O(1) insert, remove and uniform sampling
/// (a dense vector plus each block's position in it).
#[derive(Clone, Debug)]
pub struct CandidateList {
    first_block: u32,
    items: Vec<u32>,
    pos: Vec<u32>,
}

impl CandidateList {
    pub fn new(first_block: u32, blocks: u32) -> Self {
        CandidateList {
            first_block,
            items: Vec::new(),
            pos: vec![NONE; blocks as usize],
        }
    }

    pub fn push(&mut self, block: u32) {
        let local = (block - self.first_block) as usize;
        debug_assert_eq!(self.pos[local], NONE);
        self.pos[local] = self.items.len() as u32;
        self.items.push(block);
    }

    pub fn remove(&mut self, block: u32) {
        let local = (block - self.first_block) as usize;
        let p = self.pos[local];
        if p == NONE {
            return;
        }
        let last = *self.items.last().expect("non-empty");
        self.items.swap_remove(p as usize);
        if last != block {
            self.pos[(last - self.first_block) as usize] = p;
        }
        self.pos[local] = NONE;
    }

    /// Whether `block` is in the set (false for a block outside its range).
    pub fn contains(&self, block: u32) -> bool {
        block
            .checked_sub(self.first_block)
            .and_then(|local| self.pos.get(local as usize))
            .is_some_and(|&p| p != NONE)
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.items
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// d-choices: sample `d` candidates uniformly (with replacement) and take the one
/// with the fewest valid pages (ties: lowest block number).
#[derive(Clone)]
pub struct DChoices {
    d: u32,
    candidates: CandidateList,
}

impl DChoices {
    pub fn new(first_block: u32, blocks: u32, d: u32) -> Self {
        DChoices {
            d: d.max(1),
            candidates: CandidateList::new(first_block, blocks),
        }
    }
}

impl VictimPolicy for DChoices {
    fn insert(&mut self, stats: &BlockStats) {
        let block = stats.block;
        self.candidates.push(block);
    }

    fn select(&mut self, ctx: &mut SelectCtx) -> Option<u32> {
        let n = self.candidates.len();
        if n == 0 {
            return None;
        }
        let items = self.candidates.as_slice();
        let mut best = (u32::MAX, u32::MAX);
        for _ in 0..self.d {
            let b = items[ctx.rng.random_range(0..n)];
            best = best.min((ctx.flash.valid_count[b as usize], b));
        }
        self.candidates.remove(best.1);
        Some(best.1)
    }

    fn len(&self) -> usize {
        self.candidates.len()
    }

    fn last_scored(&self) -> u64 {
        self.d as u64
    }
}
