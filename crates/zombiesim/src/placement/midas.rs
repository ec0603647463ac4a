//! MiDAS (Oh et al., *Minimizing Write Amplification in Log-Structured Systems through
//! Adaptive Group Number and Size Configuration*, FAST'24), `ftl.placement = "midas"`
//! or `"midas:K"`: data sorted by age into a chain of groups, each group cleaned FIFO,
//! the number of groups and their sizes fitted to the workload's update intervals.
//!
//! ```text
//!   host write ─► G0 ──GC (oldest block)──► G1 ──► … ──► G(m−1) ──► tail (gc.policy) ─┐
//!                                                                     ▲               │
//!                                                                     └───────────────┘
//!   every epoch (¼ drive write of host writes):
//!     UID   update intervals of sampled pages → survival S(a)   (midas_model::Survival)
//!     GCS   m ≤ K − 1 FIFO groups and their sizes, least WAF by MCAM (midas_model::Chain)
//! ```
//!
//! A page moves one group down the chain each time GC copies it, so a group holds data
//! of a narrow band of ages, and a FIFO group sized to the band where its data dies
//! is erased mostly empty. GC takes the oldest block of the first group over its quota
//! (the GC units' chained selection, `gc::Chained`); when none is, the tail's own policy (`gc.policy`, greedy
//! or cost-benefit as in the authors' simulator) picks among the rest; a block with no
//! valid page goes first wherever it is. Until the first model there is no FIFO group
//! (the authors start with G0 of one segment, and leave their load phase out of the
//! count; a MiDAS that knows nothing yet is the tail's policy here).
//!
//! The paper's segments are this FTL's blocks, its time unit host page writes. The
//! interval histogram is kept on one page in `max(1, logical / 65536)`, on bins of a
//! quarter block of host writes (the authors' unit), up to four drive writes of age.
//! An epoch is a quarter drive write (the authors' is several device capacities,
//! too long for the runs here); the model is fitted when the epoch saw at least 256
//! overwrites of sampled pages, and its groups replace those in force only when the
//! model, on the new curve, predicts them 3% better than those (each change moves data
//! between groups; without it the groups follow every epoch's noise), and a chain
//! replaces none only when predicted better than the WAF measured without one.
//!
//! Each epoch's WAF is measured (host writes and GC copies the policy placed). A
//! chain that, over an epoch it ran whole, did more than 2% worse than the tail's
//! policy alone did over its last whole epoch is set aside, and no chain is tried for
//! 2, 4, … up to 64 epochs (the authors fall back to a plain mode on irregular
//! patterns too, detected from the groups' valid ratios against the predicted ones;
//! here from measured WAFs). Not modelled: the HOT group and the authors'
//! irregular-pattern checks (docs/lifetimes.md).

use super::midas_model::{Chain, Survival};
use super::{
    ChainGroup, GcCopy, HostWrite, Placement, PlacementEntry, PlacementModel, StreamPlan,
    StreamsWanted,
};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "midas",
    about: "midas[:K] (MiDAS, FAST'24: a chain of at most K groups (default 8) by GCs survived, cleaned FIFO, sized to the update intervals)",
    future: false,
    streams: |param, regions| {
        let k = param.unwrap_or(DEFAULT_GROUPS);
        if !(2..=MAX_GROUPS).contains(&k) {
            return Err((
                "ftl.placement".into(),
                format!("`midas:{k}`: K, the most groups, must be at least 2 and at most {MAX_GROUPS}"),
            ));
        }
        super::one_region(&format!("midas:{k}"), regions)?;
        Ok(StreamsWanted {
            host: Some(1),
            gc: Some(k - 1),
        })
    },
    build: |param, plan| Box::new(Midas::new(param.unwrap_or(DEFAULT_GROUPS), plan)),
};

/// Groups when `midas` names none.
pub const DEFAULT_GROUPS: u32 = 8;
/// The most groups `midas:K` takes.
pub const MAX_GROUPS: u32 = 16;
/// Overwrites of sampled pages an epoch must see to be modelled.
pub const MIN_OVERWRITES: u64 = 256;
/// Histogram bins at most (the bin widens past it).
const MAX_BINS: u64 = 65_536;
/// Sampled pages at least (every page below it).
const SAMPLES: u64 = 65_536;
const NEVER: u64 = u64::MAX;

/// MiDAS's chain of groups and its models.
#[derive(Clone)]
pub struct Midas {
    groups: u32,
    gc_first: u32,
    zombie: Option<u32>,
    /// The FIFO groups now (streams and quotas).
    chain: Vec<ChainGroup>,
    state: PlacementModel,
    /// Blocks the groups share, all usable blocks, pages per block.
    model_blocks: u32,
    device_blocks: u32,
    pages_per_block: u32,
    /// One page in `every` is sampled; `last[lpn / every]` is its last host write.
    every: u64,
    last: Vec<u64>,
    /// Sampled pages written at least once.
    seen: u64,
    /// The epoch: its start, its length (host page writes).
    epoch_start: u64,
    epoch_len: u64,
    /// Histogram bin width (host page writes), and per bin: intervals entering
    /// observation, overwritten, still open at the epoch's end.
    width: u64,
    enter: Vec<f64>,
    died: Vec<f64>,
    censored: Vec<f64>,
    overwrites: u64,
    /// Host writes and GC copies this epoch.
    epoch_host: u64,
    epoch_copies: u64,
    /// Epochs the chain in force has run whole, and epochs left before a chain may
    /// be tried again after one was set aside.
    in_force: u32,
    backoff: u64,
}

/// New groups replace those in force only when predicted this much better under the
/// same curve (a change moves data between groups).
pub const CHANGE: f64 = 0.03;
/// A chain this much worse than the tail's policy alone is set aside.
pub const WORSE: f64 = 1.02;
/// The longest wait, in epochs, before a chain set aside is tried again.
pub const MAX_BACKOFF: u64 = 64;

impl Midas {
    pub fn new(groups: u32, plan: &StreamPlan) -> Self {
        debug_assert_eq!((plan.host_streams, plan.gc_streams), (1, groups - 1));
        let logical = plan.logical_pages.max(1);
        let every = (logical / SAMPLES).max(1);
        let range = 4 * logical;
        let width = (u64::from(plan.pages_per_block) / 4)
            .max(range.div_ceil(MAX_BINS))
            .max(1);
        let bins = range.div_ceil(width) as usize;
        let mut m = Midas {
            groups,
            gc_first: plan.gc_first,
            zombie: plan.zombie,
            chain: Vec::new(),
            state: PlacementModel::default(),
            model_blocks: plan.blocks.saturating_sub(plan.reserve),
            device_blocks: plan.blocks.max(1),
            pages_per_block: plan.pages_per_block,
            every,
            last: vec![NEVER; (plan.stored_pages as u64).div_ceil(every) as usize],
            seen: 0,
            epoch_start: 0,
            epoch_len: (logical / 4).max(1),
            width,
            enter: vec![0.0; bins],
            died: vec![0.0; bins],
            censored: vec![0.0; bins],
            overwrites: 0,
            epoch_host: 0,
            epoch_copies: 0,
            in_force: 0,
            backoff: 0,
        };
        // No FIFO group before the first model: the tail's policy alone.
        m.apply(Vec::new(), 0.0);
        m
    }

    /// The configuration in force.
    pub fn state(&self) -> &PlacementModel {
        &self.state
    }

    fn stream_of_group(&self, g: u32) -> u32 {
        if g == 0 {
            0
        } else {
            self.gc_first + g - 1
        }
    }

    fn group_of_stream(&self, s: u32) -> u32 {
        if s == 0 {
            0
        } else if s >= self.gc_first && s < self.gc_first + self.groups - 1 {
            s - self.gc_first + 1
        } else {
            // The zombie stream: data at the end of the chain.
            self.groups - 1
        }
    }

    fn apply(&mut self, sizes: Vec<u32>, predicted: f64) {
        if sizes.len() != self.chain.len() {
            self.in_force = 0;
        }
        let device = f64::from(self.device_blocks);
        self.chain = sizes
            .iter()
            .enumerate()
            .map(|(g, &s)| ChainGroup {
                stream: self.stream_of_group(g as u32),
                share: f64::from(s) / device,
            })
            .collect();
        self.state.sizes = sizes;
        self.state.predicted_waf = predicted;
    }

    /// An interval of a sampled page last written at `from`, observed up to `to`
    /// (overwritten then when `died`), from its age when the epoch began.
    fn observe(&mut self, from: u64, to: u64, died: bool) {
        let bins = self.enter.len() as u64;
        let entry = self.epoch_start.saturating_sub(from) / self.width;
        if entry >= bins {
            return;
        }
        let age = (to - from) / self.width;
        let exit = age.min(bins - 1) as usize;
        self.enter[entry as usize] += 1.0;
        // Past the histogram's range an overwrite only says the page lived that long.
        if died && age < bins {
            self.died[exit] += 1.0;
            self.overwrites += 1;
        } else {
            self.censored[exit] += 1.0;
        }
    }

    /// Close the epoch at `now`: fit the survival curve, search the group sizes.
    fn end_epoch(&mut self, now: u64) {
        for i in 0..self.last.len() {
            let from = self.last[i];
            if from != NEVER {
                self.observe(from, now, false);
            }
        }
        self.state.epochs += 1;
        // The chain against the tail's policy alone, each measured over an epoch it
        // ran whole (the epoch after a change moves data between groups).
        if self.epoch_host > 0 && self.overwrites >= MIN_OVERWRITES && self.in_force >= 1 {
            let waf = (self.epoch_host + self.epoch_copies) as f64 / self.epoch_host as f64;
            if self.chain.is_empty() {
                self.state.tail_waf = waf;
            } else if self.state.tail_waf > 0.0 && waf > self.state.tail_waf * WORSE {
                self.state.set_aside += 1;
                self.backoff = (1u64 << self.state.set_aside.min(6)).min(MAX_BACKOFF);
                self.apply(Vec::new(), 0.0);
            }
        }
        self.in_force = self.in_force.saturating_add(1);
        self.epoch_host = 0;
        self.epoch_copies = 0;
        if self.backoff > 0 {
            self.backoff -= 1;
        } else if self.overwrites >= MIN_OVERWRITES {
            let survival =
                Survival::kaplan_meier(self.width, &self.enter, &self.died, &self.censored);
            let chain = Chain {
                survival: &survival,
                blocks: self.model_blocks,
                pages_per_block: self.pages_per_block,
                live: (self.seen * self.every) as f64,
            };
            if let Some((sizes, waf)) = chain.search(self.groups as usize - 1) {
                self.state.modelled += 1;
                self.state.static_pages = chain.static_pages().round() as u64;
                // Keep the groups in force unless the new ones are predicted to do
                // clearly better under the same curve (each change moves data).
                let current = chain.waf(&self.state.sizes).unwrap_or(f64::INFINITY);
                // Nor does a chain replace the tail alone when predicted no better than
                // what the tail alone was measured to do.
                let worth =
                    sizes.is_empty() || self.state.tail_waf == 0.0 || waf < self.state.tail_waf;
                if worth && waf * (1.0 + CHANGE) < current {
                    self.apply(sizes, waf);
                } else {
                    self.state.predicted_waf = current;
                }
            }
        }
        self.enter.fill(0.0);
        self.died.fill(0.0);
        self.censored.fill(0.0);
        self.overwrites = 0;
        self.epoch_start = now;
    }
}

impl Placement for Midas {
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        if write.now >= self.epoch_start + self.epoch_len {
            self.end_epoch(write.now);
        }
        self.epoch_host += 1;
        let lpn = write.lpn as u64;
        if lpn.is_multiple_of(self.every) {
            let i = (lpn / self.every) as usize;
            let last = std::mem::replace(&mut self.last[i], write.now);
            if last == NEVER {
                self.seen += 1;
            } else {
                self.observe(last, write.now, true);
            }
        }
        0
    }

    fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        self.epoch_copies += 1;
        if copy.zombie {
            if let Some(z) = self.zombie {
                return z;
            }
        }
        // With no FIFO group the tail is group 1 (GC copies keep to GC streams).
        let tail = (self.chain.len() as u32).max(1);
        let next = (self.group_of_stream(copy.from_stream) + 1).min(tail);
        self.stream_of_group(next)
    }

    fn chained(&self) -> bool {
        true
    }

    fn chain(&self) -> &[ChainGroup] {
        &self.chain
    }

    fn memory_bytes(&self) -> usize {
        self.last.len() * 8 + self.enter.len() * 24
    }

    fn model(&self) -> Option<PlacementModel> {
        Some(self.state.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::WriteHint;

    fn plan() -> StreamPlan {
        StreamPlan {
            host_streams: 1,
            gc_first: 1,
            gc_streams: 3,
            zombie: Some(4),
            logical_pages: 4_096,
            stored_pages: 4_096,
            blocks: 80,
            reserve: 4,
            pages_per_block: 64,
        }
    }

    fn write(p: &mut Midas, lpn: usize, now: u64) -> u32 {
        p.host_stream(&HostWrite {
            lpn,
            overwrite: true,
            hint: WriteHint::NONE,
            now,
        })
    }

    fn copy(p: &mut Midas, from_stream: u32, zombie: bool) -> u32 {
        p.gc_stream(&GcCopy {
            lpn: 0,
            zombie,
            block_modified: 0,
            now: 0,
            from_stream,
        })
    }

    #[test]
    fn copies_move_one_group_down_the_chain_and_stay_in_the_tail() {
        let mut p = Midas::new(4, &plan());
        // Before any model: no FIFO group; copies go to the tail (group 1).
        assert!(p.chain().is_empty());
        assert_eq!(copy(&mut p, 0, false), 1);
        assert_eq!(copy(&mut p, 1, false), 1);
        assert_eq!(copy(&mut p, 0, true), 4);
        p.apply(vec![3, 5, 2], 1.5);
        // G0 → G1 (stream 1) → G2 (stream 2) → tail G3 (stream 3) → G3.
        let next: Vec<u32> = (0..4).map(|s| copy(&mut p, s, false)).collect();
        assert_eq!(next, [1, 2, 3, 3]);
        assert_eq!(p.chain()[1].stream, 1);
        assert!((p.chain()[1].share - 5.0 / 80.0).abs() < 1e-12);
        // A shorter chain: the old groups' data goes to the new tail.
        p.apply(vec![3], 1.5);
        let next: Vec<u32> = (0..4).map(|s| copy(&mut p, s, false)).collect();
        assert_eq!(next, [1, 1, 1, 1]);
    }

    #[test]
    fn a_skewed_stream_of_writes_is_modelled_into_a_chain() {
        let mut p = Midas::new(4, &plan());
        // Fill, then 90% of writes to 10% of the pages.
        let mut now = 0u64;
        for lpn in 0..4_096 {
            write(&mut p, lpn, now);
            now += 1;
        }
        let mut x = 12_345u64;
        for _ in 0..8 * 4_096 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let r = (x >> 33) % 1_000;
            let lpn = if r < 900 {
                r as usize % 410
            } else {
                410 + (x >> 20) as usize % 3_686
            };
            assert_eq!(write(&mut p, lpn, now), 0);
            // GC copying three pages a host write without a chain: WAF 4 measured.
            if p.chain().is_empty() {
                for _ in 0..3 {
                    copy(&mut p, 1, false);
                }
            }
            now += 1;
        }
        let st = p.state().clone();
        assert!(st.epochs >= 8 && st.modelled >= 7, "{st:?}");
        assert!((st.tail_waf - 4.0).abs() < 1e-9, "{st:?}");
        assert!(!st.sizes.is_empty() && st.sizes.len() <= 3, "{st:?}");
        assert!(st.predicted_waf > 1.0 && st.predicted_waf < 3.0, "{st:?}");
    }
}
