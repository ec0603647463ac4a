//! Victim selection: which closed block garbage collection reclaims next.
//!
//! One small trait, [`VictimPolicy`], one instance per GC unit. A policy sees a
//! block when it is closed (fully programmed, [`VictimPolicy::insert`]), hears of
//! every change to a closed block's statistics through one event carrying them
//! ([`VictimPolicy::changed`] with a [`BlockStats`]: a page died, the hot path, or was
//! revived; its zombie count or pooled weight changed), and picks and forgets a victim
//! in [`VictimPolicy::select`]. Blocks leave the candidate set only by being selected.
//!
//! | policy | structure | cost per invalidation | cost per selection |
//! |---|---|---|---|
//! | greedy | bucket bitsets by valid count ([`buckets`]) | O(1) | O(blocks / 4096) words |
//! | cost-benefit | candidate list, exact scan | O(1) (nothing) | O(candidates) |
//! | fifo | queue in closing order | O(1) (nothing) | O(1) |
//! | windowed-greedy:w | queue, scan of the w oldest | O(1) (nothing) | O(w) |
//! | random, d-choices:d | candidate list, d samples | O(1) (nothing) | O(d) |
//! | z-greedy | bucket bitsets by `2v + min(2z, i)` ([`zombie`]) | O(1) | O(blocks / 4096) words |
//! | oracle | z-greedy's, zombies marked from the run's future (`sim::oracle`) | O(1) | O(blocks / 4096) words |
//! | z-cost-benefit | candidate list, exact scan | O(1) (nothing) | O(candidates) |
//! | greedy-delay:p | bucket bitsets by `v`, delayed blocks after all others | O(1) | O(blocks / 4096) words |
//! | (chain, `ftl.placement = "midas"`) | a FIFO queue per group, then the policy above for the rest ([`chained`]) | as the policy's | O(groups) + the policy's |
//!
//! Zombie-aware policies key on the zombie count the event carries; the others ignore it.
//! | popularity | buckets by `v + min(w, i/2)` | O(1) | O(blocks / 4096) words |
//!
//! Beside them, [`External`] asks a [`Chooser`] outside the simulator (the Python
//! binding's `victim=`) with the whole candidate set, sorted by block number.
//!
//! Ties go to the lowest block number so runs are deterministic.

mod block_stats;
pub mod buckets;
mod chained;
mod cost_benefit;
mod external;
mod greedy;
mod policy;
mod popularity;
mod queue;
mod sampled;
pub mod zombie;

pub use block_stats::BlockStats;
pub use buckets::BucketIndex;
pub use chained::Chained;
pub use cost_benefit::CostBenefit;
pub use external::{Candidates, Chooser, External};
pub use greedy::Greedy;
pub use policy::{PolicyArgs, SelectCtx, VictimPolicy};
pub use popularity::Popularity;
pub use queue::{Fifo, WindowedGreedy};
pub use sampled::{CandidateList, DChoices};
pub use zombie::{GreedyDelay, ZGreedy};

use crate::config::{CbAge, PolicySpec};

/// The registry's policies ([`crate::config::victim_policies!`]): a module each, and
/// their constructors in the registry's order.
macro_rules! registered_builders {
    ($(($module:ident, $name:literal, $about:literal, $zombie:literal),)*) => {
        $(mod $module;)*
        /// The registered policies' constructors, by index.
        const BUILDERS: &[fn(&PolicyArgs) -> Box<dyn VictimPolicy>] = &[$($module::build),*];
    };
}
crate::config::victim_policies!(registered_builders);

/// Build the policy named by `spec` for a unit owning blocks `first_block .. first_block + blocks`
/// (`age`: what cost-benefit's age is; the other policies ignore it).
pub fn build(
    spec: PolicySpec,
    age: CbAge,
    first_block: u32,
    blocks: u32,
    pages_per_block: u32,
) -> Box<dyn VictimPolicy> {
    match spec {
        PolicySpec::Greedy => Box::new(Greedy::new(first_block, blocks, pages_per_block)),
        PolicySpec::CostBenefit => Box::new(CostBenefit::new(first_block, blocks, age)),
        PolicySpec::Fifo => Box::new(Fifo::default()),
        PolicySpec::WindowedGreedy(w) => Box::new(WindowedGreedy::new(w)),
        PolicySpec::Random => Box::new(DChoices::new(first_block, blocks, 1)),
        PolicySpec::DChoices(d) => Box::new(DChoices::new(first_block, blocks, d)),
        // The oracle scores like z-greedy; its zombie marks come from the future of the
        // run (`sim::oracle`), not from a notification channel.
        PolicySpec::ZGreedy | PolicySpec::Oracle => {
            Box::new(ZGreedy::new(first_block, blocks, pages_per_block))
        }
        PolicySpec::ZCostBenefit => Box::new(CostBenefit::zombie_aware(first_block, blocks, age)),
        PolicySpec::GreedyDelay(p) => {
            Box::new(GreedyDelay::new(first_block, blocks, pages_per_block, p))
        }
        PolicySpec::Popularity => Box::new(Popularity::new(first_block, blocks, pages_per_block)),
        PolicySpec::Registered(index) => BUILDERS[index as usize](&PolicyArgs {
            first_block,
            blocks,
            pages_per_block,
        }),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod zombie_example;
