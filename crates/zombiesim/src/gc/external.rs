//! A victim policy decided outside the simulator: a [`Chooser`] (the Python binding's
//! `victim=` callable) sees the whole candidate set of a GC unit as columns and
//! answers with a ranking, so one crossing serves one or more selections.
//!
//! ```text
//!   select() ──► ranking left from the last answer?
//!                 │ yes: take its next block that is still a candidate
//!                 │ no:  Candidates { block, valid, invalid, zombies, age, ... }
//!                 ▼          (sorted by block number)
//!               chooser.choose(&candidates) ──► [victim, next, ...]
//!                 │
//!                 └─ first is the victim; the rest wait for the next selections
//! ```
//!
//! An answer of one block asks again at every selection (what a policy that must see
//! every change wants, e.g. one reproducing greedy exactly); a longer ranking trades
//! freshness for fewer crossings. A block that is not a candidate, or no answer,
//! stops the run ([`VictimPolicy::failure`]).

use super::{BlockStats, SelectCtx, VictimPolicy};
use crate::flash::FlashState;
use std::sync::Arc;

/// The candidates of one GC unit at a selection, one entry per block, sorted by block
/// number (with FDP reclaim units, a "block" is a reclaim unit and its figures are
/// the unit's sums).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Candidates {
    /// Logical time now (host page writes so far).
    pub now: u64,
    pub block: Vec<u32>,
    /// Valid pages.
    pub valid: Vec<u32>,
    /// Pages holding a dead copy.
    pub invalid: Vec<u32>,
    /// Valid pages the device knows as zombies (weighted as `gc.zombie_weight` says).
    pub zombies: Vec<u32>,
    /// Logical time of the block's last program or invalidation.
    pub last_modified: Vec<u64>,
    /// `now - last_modified`: cost-benefit's age.
    pub age: Vec<u64>,
    pub erase_count: Vec<u32>,
    /// The write stream the block was opened for.
    pub stream: Vec<u32>,
    /// Popularity weight of the block's pooled dead pages (dead-value pool; else 0).
    pub weight: Vec<u32>,
}

impl Candidates {
    /// The figures of `blocks` (ascending) in `flash` at logical time `now`, a column
    /// at a time (sequential reads); `weight(i)` is the i-th block's pooled weight.
    fn gather(now: u64, block: Vec<u32>, flash: &FlashState, weight: impl Fn(u32) -> u32) -> Self {
        let column = |f: &dyn Fn(usize) -> u32| block.iter().map(|&b| f(b as usize)).collect();
        let valid: Vec<u32> = column(&|b| flash.valid_count[b]);
        let invalid = block
            .iter()
            .zip(&valid)
            .map(|(&b, &v)| flash.write_ptr[b as usize] - v)
            .collect();
        let last_modified: Vec<u64> = block
            .iter()
            .map(|&b| flash.last_modified[b as usize])
            .collect();
        Candidates {
            now,
            valid,
            invalid,
            zombies: column(&|b| flash.weighted_zombies(b as u32)),
            age: last_modified
                .iter()
                .map(|&m| now.saturating_sub(m))
                .collect(),
            last_modified,
            erase_count: column(&|b| flash.erase_count[b]),
            stream: column(&|b| u32::from(flash.stream[b])),
            weight: block.iter().map(|&b| weight(b)).collect(),
            block,
        }
    }

    /// Number of candidates.
    pub fn len(&self) -> usize {
        self.block.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.block.is_empty()
    }
}

/// What decides an external policy's victims.
pub trait Chooser: Send + Sync {
    /// What the report calls the policy.
    fn name(&self) -> String;
    /// Victims among `candidates`, best first (at least one), or `None` when the
    /// chooser failed (it keeps why; the run stops).
    fn choose(&self, candidates: Candidates) -> Option<Vec<u32>>;
}

/// A GC unit's victim policy asking a [`Chooser`].
#[derive(Clone)]
pub struct External {
    chooser: Arc<dyn Chooser>,
    first_block: u32,
    /// Which of the unit's blocks are candidates (a bit each, in block order, so the
    /// columns come out sorted from one sequential pass).
    member: Vec<u64>,
    len: usize,
    /// Pooled dead pages' weight per block, as the last event gave it.
    weight: Vec<u32>,
    /// The rest of the last ranking, next victim last.
    ranking: Vec<u32>,
    scored: u64,
    /// Why the last selection found no victim although there were candidates.
    failure: Option<String>,
}

impl External {
    pub fn new(chooser: Arc<dyn Chooser>, first_block: u32, blocks: u32) -> Self {
        External {
            chooser,
            first_block,
            member: vec![0; (blocks as usize).div_ceil(64)],
            len: 0,
            weight: vec![0; blocks as usize],
            ranking: Vec::new(),
            scored: 0,
            failure: None,
        }
    }

    /// `block`'s word and bit in `member`, if it is one of the unit's.
    #[inline]
    fn slot(&self, block: u32) -> Option<(usize, u64)> {
        let local = block.checked_sub(self.first_block)? as usize;
        (local < self.weight.len()).then_some((local / 64, 1u64 << (local % 64)))
    }

    fn contains(&self, block: u32) -> bool {
        self.slot(block)
            .is_some_and(|(w, bit)| self.member[w] & bit != 0)
    }

    /// Take `block` out of the candidates (it is one).
    fn remove(&mut self, block: u32) {
        let (w, bit) = self.slot(block).expect("a block of the unit");
        self.member[w] &= !bit;
        self.len -= 1;
    }

    /// Ask the chooser; keep its ranking.
    fn ask(&mut self, ctx: &SelectCtx) -> Option<()> {
        let mut blocks = Vec::with_capacity(self.len);
        for (w, &word) in self.member.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let local = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                blocks.push(self.first_block + local as u32);
            }
        }
        let first = self.first_block;
        let weight = |b: u32| self.weight[(b - first) as usize];
        let view = Candidates::gather(ctx.now, blocks, ctx.flash, weight);
        let candidates = self.len;
        self.scored = candidates as u64;
        let name = || self.chooser.name();
        let Some(answer) = self.chooser.choose(view) else {
            self.failure = Some(format!("victim policy {} failed", name()));
            return None;
        };
        if answer.is_empty() {
            self.failure = Some(format!(
                "victim policy {} chose no block among {candidates} candidates",
                name()
            ));
            return None;
        }
        if let Some(&bad) = answer.iter().find(|&&b| !self.contains(b)) {
            self.failure = Some(format!(
                "victim policy {} chose block {bad}, which is not one of the {candidates} candidates",
                name()
            ));
            return None;
        }
        self.ranking = answer;
        self.ranking.reverse();
        Some(())
    }
}

impl VictimPolicy for External {
    fn insert(&mut self, stats: &BlockStats) {
        let (w, bit) = self.slot(stats.block).expect("a block of the unit");
        debug_assert_eq!(
            self.member[w] & bit,
            0,
            "block {} inserted twice",
            stats.block
        );
        self.member[w] |= bit;
        self.len += 1;
        self.weight[(stats.block - self.first_block) as usize] = stats.weight();
    }

    #[inline]
    fn changed(&mut self, stats: &BlockStats) {
        self.weight[(stats.block - self.first_block) as usize] = stats.weight();
    }

    fn select(&mut self, ctx: &mut SelectCtx) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        // A victim taken from the last ranking scored nothing new.
        self.scored = 1;
        loop {
            while let Some(block) = self.ranking.pop() {
                if self.contains(block) {
                    self.remove(block);
                    return Some(block);
                }
            }
            self.ask(ctx)?;
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn last_scored(&self) -> u64 {
        self.scored
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}
