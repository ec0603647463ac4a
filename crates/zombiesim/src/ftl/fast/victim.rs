//! Which random log block FAST reclaims (`ftl.log_victim`).
//!
//! - `round-robin`: the oldest RW log block (FIFO), as FAST does.
//! - `ba-vbs` (004 §5, eqs. 4–9): the RW log block `L` with the lowest
//!
//! ```text
//!   Δ(L) = δ_merge + δ_erase − δ_benefit
//!   δ_merge   = |B|·(C_b + C_p) + |F|·(C_r + C_p)
//!   δ_erase   = (|A| + 1)·C_e
//!   δ_benefit = Σ_{p ∈ B} (1 − P(U_p))·C_p·(1 + α),   α = (C_p + C_r) / C_p
//! ```
//!
//!   over `A` = the logical blocks with a valid page in `L`, `B` = their pages the
//!   merge takes from the buffer (dirty there), `F` = their other pages that have a
//!   flash copy. Costs come from `timing.*` (µs; `C_b` = `timing.dram_ns`). Without
//!   BA-BM a merge takes nothing from the buffer, so `B` is empty and every page
//!   with a flash copy is in `F`: the estimate is of the merge that will run.
//!   Ties go to the older block. Choosing scans every RW log block: each logical
//!   block with a valid page in any of them is scored once per reclaim, a buffer
//!   look-up per page (up to log blocks × pages per block² look-ups; with 128 log
//!   blocks of 64 pages, a few hundred thousand per reclaim, one reclaim per 64
//!   random updates).

use super::FastFtl;
use crate::config::LogVictim;
use crate::ftl::{BlockMapping, BufferView};
use rustc_hash::FxHashMap;

/// What merging one logical block costs and saves (µs): `δ_merge` of its pages and
/// its share of `δ_benefit`.
#[derive(Clone, Copy)]
struct BlockCost {
    merge: f64,
    benefit: f64,
}

impl FastFtl {
    /// `Δ(L)` of BA-VBS for the log block `block` (µs), with the buffer as it is now.
    pub fn log_block_delta(&self, block: u32, buffer: &dyn BufferView) -> f64 {
        self.delta(block, buffer, &mut FxHashMap::default())
    }

    /// `Δ(L)`, the logical blocks' costs memoised in `memo` (one reclaim scores
    /// every log block, and a logical block often has pages in several).
    fn delta(
        &self,
        block: u32,
        buffer: &dyn BufferView,
        memo: &mut FxHashMap<u32, BlockCost>,
    ) -> f64 {
        let ppb = self.base.ppb();
        let mut associated: Vec<u32> = self
            .base
            .flash
            .valid_pages(block)
            .map(|p| self.base.flash.owner[p as usize] / ppb)
            .collect();
        associated.sort_unstable();
        associated.dedup();
        let mut delta = (associated.len() + 1) as f64 * self.costs.erase;
        for &b in &associated {
            let c = *memo.entry(b).or_insert_with(|| self.block_cost(b, buffer));
            delta += c.merge - c.benefit;
        }
        delta
    }

    /// The merge cost and benefit of logical block `b`'s pages.
    fn block_cost(&self, b: u32, buffer: &dyn BufferView) -> BlockCost {
        let ppb = self.base.ppb() as u64;
        let c = self.costs;
        let alpha = (c.program + c.read) / c.program;
        let look = self.buffer_aware_merge && buffer.any_dirty();
        let (mut from_buffer, mut from_flash, mut benefit) = (0u64, 0u64, 0.0);
        let first = b as u64 * ppb;
        for lpn in first..first + ppb {
            if look && buffer.is_dirty(lpn) {
                from_buffer += 1;
                benefit += (1.0 - buffer.update_probability(lpn)) * c.program * (1.0 + alpha);
            } else if self.newest(lpn) != crate::flash::NONE {
                from_flash += 1;
            }
        }
        BlockCost {
            merge: from_buffer as f64 * (c.buffer + c.program)
                + from_flash as f64 * (c.read + c.program),
            benefit,
        }
    }

    /// The index in `rw` of the log block to reclaim.
    pub(super) fn choose_victim(&self, buffer: &dyn BufferView) -> usize {
        match self.victim {
            LogVictim::RoundRobin => 0,
            LogVictim::BaVbs => {
                let mut memo = FxHashMap::default();
                let mut best = (0, f64::INFINITY);
                for (i, &l) in self.rw.iter().enumerate() {
                    let d = self.delta(l, buffer, &mut memo);
                    if d < best.1 {
                        best = (i, d);
                    }
                }
                best.0
            }
        }
    }
}
