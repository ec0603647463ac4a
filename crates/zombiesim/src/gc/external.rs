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

use super::{BlockStats, CandidateList, SelectCtx, VictimPolicy};
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
    fn clear(&mut self, now: u64) {
        self.now = now;
        self.block.clear();
        self.valid.clear();
        self.invalid.clear();
        self.zombies.clear();
        self.last_modified.clear();
        self.age.clear();
        self.erase_count.clear();
        self.stream.clear();
        self.weight.clear();
    }

    fn push(&mut self, stats: &BlockStats, weight: u32) {
        let modified = stats.last_modified();
        self.block.push(stats.block);
        self.valid.push(stats.valid);
        self.invalid.push(stats.invalid());
        self.zombies.push(stats.zombies());
        self.last_modified.push(modified);
        self.age.push(self.now.saturating_sub(modified));
        self.erase_count.push(stats.erase_count());
        self.stream.push(stats.stream());
        self.weight.push(weight);
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
    fn choose(&self, candidates: &Candidates) -> Option<Vec<u32>>;
}

/// A GC unit's victim policy asking a [`Chooser`].
#[derive(Clone)]
pub struct External {
    chooser: Arc<dyn Chooser>,
    first_block: u32,
    candidates: CandidateList,
    /// Pooled dead pages' weight per block, as the last event gave it.
    weight: Vec<u32>,
    /// The rest of the last ranking, next victim last.
    ranking: Vec<u32>,
    /// Reused columns.
    view: Candidates,
    scored: u64,
    /// Why the last selection found no victim although there were candidates.
    failure: Option<String>,
}

impl External {
    pub fn new(chooser: Arc<dyn Chooser>, first_block: u32, blocks: u32) -> Self {
        External {
            chooser,
            first_block,
            candidates: CandidateList::new(first_block, blocks),
            weight: vec![0; blocks as usize],
            ranking: Vec::new(),
            view: Candidates::default(),
            scored: 0,
            failure: None,
        }
    }

    /// Ask the chooser; keep its ranking.
    fn ask(&mut self, ctx: &SelectCtx) -> Option<()> {
        let mut blocks = self.candidates.as_slice().to_vec();
        blocks.sort_unstable();
        self.view.clear(ctx.now);
        for &b in &blocks {
            let stats = BlockStats::of(b, ctx.flash);
            self.view
                .push(&stats, self.weight[(b - self.first_block) as usize]);
        }
        self.scored = blocks.len() as u64;
        let name = self.chooser.name();
        let Some(answer) = self.chooser.choose(&self.view) else {
            self.failure = Some(format!("victim policy {name} failed"));
            return None;
        };
        if answer.is_empty() {
            self.failure = Some(format!(
                "victim policy {name} chose no block among {} candidates",
                blocks.len()
            ));
            return None;
        }
        if let Some(&bad) = answer.iter().find(|&&b| !self.candidates.contains(b)) {
            self.failure = Some(format!(
                "victim policy {name} chose block {bad}, which is not one of the {} candidates",
                blocks.len()
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
        self.weight[(stats.block - self.first_block) as usize] = stats.weight();
        self.candidates.push(stats.block);
    }

    #[inline]
    fn changed(&mut self, stats: &BlockStats) {
        self.weight[(stats.block - self.first_block) as usize] = stats.weight();
    }

    fn select(&mut self, ctx: &mut SelectCtx) -> Option<u32> {
        if self.candidates.is_empty() {
            return None;
        }
        // A victim taken from the last ranking scored nothing new.
        self.scored = 1;
        loop {
            while let Some(block) = self.ranking.pop() {
                if self.candidates.contains(block) {
                    self.candidates.remove(block);
                    return Some(block);
                }
            }
            self.ask(ctx)?;
        }
    }

    fn len(&self) -> usize {
        self.candidates.len()
    }

    fn last_scored(&self) -> u64 {
        self.scored
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}
