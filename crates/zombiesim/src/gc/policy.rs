//! What a victim policy is: the trait every policy implements, what it may look at
//! when it selects, and what a policy of the registry is built with.

use super::BlockStats;
use crate::flash::FlashState;
use crate::placement::ChainGroup;
use rand_pcg::Pcg64Mcg;

/// What a policy may look at when it selects.
pub struct SelectCtx<'a> {
    pub flash: &'a FlashState,
    /// Logical time now (host page writes so far).
    pub now: u64,
    pub rng: &'a mut Pcg64Mcg,
    /// The placement's chain of FIFO groups (MiDAS; empty for every other placement),
    /// read by [`super::Chained`].
    pub chain: &'a [ChainGroup],
}

dyn_clone::clone_trait_object!(VictimPolicy);

/// A victim-selection policy for one GC unit.
pub trait VictimPolicy: Send + dyn_clone::DynClone {
    /// A block of this unit became a candidate (fully programmed).
    fn insert(&mut self, stats: &BlockStats);
    /// A statistic of candidate `stats.block` changed: a page died or was revived, its
    /// count of known zombies or its pooled dead pages' weight changed. Policies that
    /// key on a statistic re-key the block; the others ignore it.
    fn changed(&mut self, _stats: &BlockStats) {}
    /// Choose a victim and remove it from the candidates; `None` when there are none.
    fn select(&mut self, ctx: &mut SelectCtx) -> Option<u32>;
    /// Number of candidates.
    fn len(&self) -> usize;
    /// Blocks the last selection scored (the firmware search cost, `timing.gc_search_us`).
    fn last_scored(&self) -> u64 {
        1
    }
    /// Whether the last victim was taken to move its data along a chain of groups
    /// ([`super::Chained`]'s FIFO groups), not for its free space: reclaiming it full
    /// is progress, not a fruitless GC.
    fn advances(&self) -> bool {
        false
    }
    /// Why the last selection found no victim although there were candidates (a
    /// policy decided outside the simulator failed): the run stops with it.
    fn failure(&self) -> Option<String> {
        None
    }
    /// Whether there are no candidates.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a policy of the registry is built with: the unit's blocks.
pub struct PolicyArgs {
    pub first_block: u32,
    pub blocks: u32,
    pub pages_per_block: u32,
}
