//! z-greedy without its cap (`gc.policy = "z-greedy-uncapped"`): every known zombie
//! delays its block.
//!
//! ```text
//!   a zombie: a valid page the host holds a dirty newer copy of; it dies on its own
//!             soon, so copying it now is wasted
//!   z-greedy (000 eq. 2):  most  i − min(z, i/2)    (key 2v + min(2z, i), lowest first)
//!   uncapped:              most  i − z              (key v + z, lowest first)
//! ```
//!
//! 000 caps the zombie penalty at half the invalid pages, so that a block with many
//! zombies but also many dead pages is not held back for ever. Without the cap every
//! zombie counts in full; the policy shows what the cap buys on a workload. It keys on
//! the block-statistics event's valid and zombie counts in a [`BucketIndex`] (O(1)
//! per event), ties to the lowest block.

use super::{BlockStats, BucketIndex, PolicyArgs, SelectCtx, VictimPolicy};

pub(super) fn build(args: &PolicyArgs) -> Box<dyn VictimPolicy> {
    Box::new(ZGreedyUncapped {
        index: BucketIndex::new(args.first_block, args.blocks, 2 * args.pages_per_block),
    })
}

/// z-greedy without its cap, for one GC unit.
#[derive(Clone)]
pub struct ZGreedyUncapped {
    index: BucketIndex,
}

/// Valid pages plus known zombies: the lowest is the block GC gains most from now.
#[inline]
fn key(stats: &BlockStats) -> u32 {
    stats.valid + stats.zombies()
}

impl VictimPolicy for ZGreedyUncapped {
    fn insert(&mut self, stats: &BlockStats) {
        self.index.insert(stats.block, key(stats));
    }

    #[inline]
    fn changed(&mut self, stats: &BlockStats) {
        self.index.update(stats.block, key(stats));
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
    use crate::flash::{FlashState, Geometry};
    use rand::SeedableRng;

    #[test]
    fn every_zombie_delays_its_block() {
        let mut flash =
            FlashState::new(&Geometry::new(&crate::Config::preset("default").unwrap()).unwrap());
        let ppb = flash.pages_per_block();
        assert_eq!(ppb, 256);
        let args = PolicyArgs {
            first_block: 0,
            blocks: 4,
            pages_per_block: ppb,
        };
        // Block 1: 200 valid pages, all zombies, 56 dead; block 2: 230 valid, no zombie.
        flash.zombies[1] = 200;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let mut order = |mut p: Box<dyn VictimPolicy>| {
            p.insert(&BlockStats::new(1, 200, &flash, &[]));
            p.insert(&BlockStats::new(2, 230, &flash, &[]));
            let mut ctx = SelectCtx {
                flash: &flash,
                now: 0,
                rng: &mut rng,
                chain: &[],
            };
            [p.select(&mut ctx), p.select(&mut ctx)]
        };
        // z-greedy's cap charges block 1 only i/2 = 28 of its 200 zombies
        // (2·200 + 56 = 456 < 2·230): it goes first. Uncapped (200 + 200 > 230) it waits.
        let capped = super::super::ZGreedy::new(0, 4, ppb);
        assert_eq!(order(Box::new(capped)), [Some(1), Some(2)]);
        assert_eq!(order(build(&args)), [Some(2), Some(1)]);
    }
}
