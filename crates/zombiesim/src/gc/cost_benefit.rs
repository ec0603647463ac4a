//! Cost-benefit (LFS, 000 eq. 1): maximise `i · a / (2 v)` by an exact scan.
//!
//! `i` invalid and `v` valid pages, `a` = now − the block's last program or
//! invalidation (logical time; LFS's age, `gc.cb_age = "since-modified"`), or that
//! time stamp itself (`"modified-time"`, 000's text read literally: recently modified
//! blocks score higher, close to greedy's ranking by `i / v`). A block with `v = 0`
//! wins outright; ties go to the lowest block number. The score depends on time, so no index can keep it sorted:
//! the scan is exact and costs O(candidates) per selection.
//!
//! z-cost-benefit (000 eq. 3) is the same scan with the invalid count discounted by the
//! block's known zombies: `(i − min(z, i/2)) · a / (2 v)`. With no zombies the two agree.

use super::{BlockStats, CandidateList, SelectCtx, VictimPolicy};
use crate::config::CbAge;
use crate::flash::FlashState;

/// Exact-scan cost-benefit victim selection.
#[derive(Clone)]
pub struct CostBenefit {
    candidates: CandidateList,
    scored: u64,
    zombie_aware: bool,
    age: CbAge,
}

impl CostBenefit {
    pub fn new(first_block: u32, blocks: u32, age: CbAge) -> Self {
        CostBenefit {
            candidates: CandidateList::new(first_block, blocks),
            scored: 0,
            zombie_aware: false,
            age,
        }
    }

    /// z-cost-benefit (000 eq. 3).
    pub fn zombie_aware(first_block: u32, blocks: u32, age: CbAge) -> Self {
        CostBenefit {
            zombie_aware: true,
            ..Self::new(first_block, blocks, age)
        }
    }
}

/// The cost-benefit score of a block (`f64::INFINITY` for a block with no valid page),
/// with the invalid count discounted by known zombies when `zombies` (z-cost-benefit).
#[inline]
pub fn score(flash: &FlashState, block: u32, now: u64, zombies: bool, age: CbAge) -> f64 {
    let b = block as usize;
    let v = flash.valid_count[b];
    if v == 0 {
        return f64::INFINITY;
    }
    let invalid = flash.pages_per_block() - v;
    let i = if zombies {
        // i − min(z, i/2), in halves to stay exact.
        (2 * invalid - (2 * flash.weighted_zombies(block)).min(invalid)) as f64 / 2.0
    } else {
        invalid as f64
    };
    let a = match age {
        CbAge::SinceModified => now.saturating_sub(flash.last_modified[b]) as f64,
        // + 1: a block modified at time 0 still ranks by i / v.
        CbAge::ModifiedTime => flash.last_modified[b] as f64 + 1.0,
    };
    i * a / (2.0 * v as f64)
}

impl VictimPolicy for CostBenefit {
    fn insert(&mut self, stats: &BlockStats) {
        let block = stats.block;
        self.candidates.push(block);
    }

    fn select(&mut self, ctx: &mut SelectCtx) -> Option<u32> {
        self.scored = self.candidates.len() as u64;
        let mut best: Option<(f64, u32)> = None;
        for &block in self.candidates.as_slice() {
            let s = score(ctx.flash, block, ctx.now, self.zombie_aware, self.age);
            best = match best {
                Some((bs, bb)) if bs > s || (bs == s && bb < block) => Some((bs, bb)),
                _ => Some((s, block)),
            };
        }
        let (_, block) = best?;
        self.candidates.remove(block);
        Some(block)
    }

    fn len(&self) -> usize {
        self.candidates.len()
    }

    fn last_scored(&self) -> u64 {
        self.scored
    }
}
