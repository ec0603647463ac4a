//! How much a zombie is worth (`gc.zombie_weight = "lifetime"`): an online estimate of
//! the chance that a page the device knows as a zombie dies — is written back or
//! trimmed — within the GC horizon, given how long it has been a zombie already,
//! learnt from the zombies seen so far. Nothing of the future is read: each sample is
//! taken when a zombie's fate is known.
//!
//! ```text
//!   notification "L is dirty above"  ──► marked_at[L] = now; its block's sum of mark
//!                                        times += now
//!   the device writes or trims L     ──► sample: died after now − marked_at[L] writes
//!   the host loses its dirty copy    ──► sample: never died (the flash copy lives on)
//!   samples: a histogram of lifetimes in powers of two (and "never"), recent samples
//!            weighing most (each older one by 1 − 1/1024 per sample)
//!   every H/4 host writes, and sooner each time the samples have doubled
//!   (16, 32, 64, ... since the start): for each age bucket k (zombies a ≥ 2^k − 1 old)
//!            p[k] = P(dies within a + H | alive at a) · n / (n + 32)
//!            (shrunk to 0 while few zombies are seen: the base policy's choices)
//! ```
//!
//! A block holding `z` known zombies marked on average `ā` writes ago counts
//! `z · p[bucket(ā)]` of them in z-greedy's and z-cost-benefit's score
//! (`FlashState::weighted_zombies`), recomputed when its zombies change and for every
//! block at each renewal (the victim index re-keyed then). A zombie that has waited
//! long for a checkpoint weighs little; one of a stream that dies at once weighs fully.
//!
//! The request stream says how a block's other valid pages die too ([`LifeTable`]): a
//! block's score also counts its valid non-zombie pages' chances to die within the
//! horizon, by each page's class (its last interval between host writes) and age, as
//! far as such predictions have come out on the blocks.
//!
//! With `gc.zombie_block`, GC copies a known zombie to the zombie block only if it is
//! worth it (its own chance at its age at least ½) and GC copies zombies fast enough to
//! fill the zombie blocks (one per plane) within the horizon: an open block is no GC
//! candidate, so a zombie block that fills slowly holds its dead pages, and spare
//! space, for as long. The copy rate is smoothed over the last renewals (each one's
//! window adds a quarter: about H once they come every H/4; at first, when they come as
//! the samples double, it follows the first copies within a few of them), and the gate
//! opens at `rate·H ≥ pages of the zombie blocks` and closes
//! below half of that: on the corpus's captures it stays shut nearly always (zombie
//! copies fill 1–50% of the zombie blocks per horizon on average), on Zombie Chasing's
//! stand-ins it opens (180–840%), where the zombie block is much of ZGC's gain.
//!
//! H is the oracle's horizon: ¾ of the spare pages GC works with (an invalid page waits
//! about that many host writes before GC reclaims it). Cost: O(1) per notification,
//! and per death, and per sealed block; O(blocks) at each renewal (every H/4 host
//! writes, and about log2(samples) more at first); 16 bytes a logical page (allocated
//! on the first mark), 8 a block, and [`LifeTable`]'s.

use super::life_table::{bucket, LifeTable, BUCKETS};
use serde::Serialize;

/// What the device learnt of its zombies' lifetimes (`gc.zombie_weight = "lifetime"`,
/// `ftl::ZombieLifetimes`), over the whole run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ZombieWeightReport {
    /// The GC horizon, host page writes: a zombie that dies within it counts.
    pub horizon: u64,
    /// Zombies whose fate was seen (written, trimmed or withdrawn), and of those the
    /// ones that died within the horizon.
    pub samples: u64,
    pub within_horizon: u64,
    /// The chance of a fresh zombie at the end (0 to 1).
    pub weight_end: f64,
    /// Zombie lifetimes seen (host page writes from mark to death): deaths per
    /// power-of-two bucket `k` (lifetimes `2^k − 1` to `2^(k+1) − 2`), and zombies
    /// withdrawn (never died).
    pub lifetimes: Vec<u64>,
    pub withdrawn: u64,
    /// Of the valid pages, the chance to die within the horizon per class (the
    /// logical page's last interval between host writes: below H/4, H, 4H, 16H, longer
    /// or none) by age bucket (host page writes since written, powers of two), as the
    /// scores counted it at the end; up to the last age with one.
    pub page_deaths: Vec<Vec<f64>>,
    /// How much those predictions counted at the end (0 to 1): the slope of the blocks'
    /// actual deaths within a horizon on their predicted ones.
    pub page_trust: f64,
}

/// Each older sample weighs this much less per sample taken.
const DECAY: f64 = 1.0 - 1.0 / 1024.0;

/// Samples before the chances are first renewed ahead of the quarter horizon.
const FIRST_SAMPLES: u64 = 16;
/// Not marked.
const NONE: u64 = u64::MAX;

/// The online estimate of a zombie's chance to die within the GC horizon.
#[derive(Clone, Debug)]
pub struct ZombieLifetimes {
    /// Samples at which the learnt chances are trusted half (`gc.lifetime_prior`).
    prior: f64,
    /// The chance at or above which a zombie goes to the zombie block
    /// (`gc.lifetime_gate`).
    gate_chance: f64,
    horizon: u64,
    logical: usize,
    marked_at: Vec<u64>,
    /// Per block, the sum of its zombies' mark times.
    mark_sum: Vec<u64>,
    /// Decayed sample weights: deaths by lifetime bucket, and never.
    deaths: [f64; BUCKETS],
    never: f64,
    /// The weight the next sample is added with (grows by 1/DECAY per sample; all
    /// weights are rescaled when it grows large).
    inc: f64,
    /// Per age bucket, the chance to die within the horizon (shrunk by confidence).
    chance: [f64; BUCKETS],
    last_refresh: u64,
    /// Samples taken (deaths and withdrawals), and at the last renewal.
    taken: u64,
    taken_at_refresh: u64,
    /// Zombie block gate: pages of the zombie blocks, GC copies of zombies since the
    /// last refresh, their smoothed rate per host page write, and the gate.
    fill_pages: f64,
    copies: u64,
    rate: f64,
    gate: bool,
    /// What the request stream says of the other valid pages.
    pages: LifeTable,
    /// Zombies that died within the horizon; every death by lifetime bucket, and the
    /// withdrawals (not decayed: the run's distribution; together, the samples taken).
    within: u64,
    histogram: [u64; BUCKETS],
    withdrawn: u64,
}

impl ZombieLifetimes {
    /// For `logical` pages on `blocks` blocks, GC horizon `horizon` (host page writes)
    /// and zombie blocks of `fill_pages` pages in all, with the default priors and gate.
    pub fn new(logical: usize, blocks: usize, horizon: u64, fill_pages: u64) -> Self {
        Self::tuned(
            logical,
            blocks,
            horizon,
            fill_pages,
            &crate::config::GcConfig::default(),
        )
    }

    /// [`ZombieLifetimes::new`] with the tunables `gc` gives: `lifetime_prior` (samples
    /// at which the zombies' learnt chances are trusted half), `lifetime_gate` (the
    /// chance at or above which a zombie goes to the zombie block) and the life table's
    /// `lifetime_page_prior` and `lifetime_class_prior`.
    pub fn tuned(
        logical: usize,
        blocks: usize,
        horizon: u64,
        fill_pages: u64,
        gc: &crate::config::GcConfig,
    ) -> Self {
        let (prior, gate_chance) = (gc.lifetime_prior, gc.lifetime_gate);
        ZombieLifetimes {
            prior,
            gate_chance,
            horizon: horizon.max(1),
            logical,
            marked_at: Vec::new(),
            mark_sum: vec![0; blocks],
            deaths: [0.0; BUCKETS],
            never: 0.0,
            inc: 1.0,
            chance: [0.0; BUCKETS],
            last_refresh: 0,
            taken: 0,
            taken_at_refresh: 0,
            fill_pages: fill_pages as f64,
            copies: 0,
            rate: 0.0,
            gate: false,
            pages: LifeTable::new(
                logical,
                blocks,
                horizon,
                gc.lifetime_page_prior,
                gc.lifetime_class_prior,
            ),
            within: 0,
            histogram: [0; BUCKETS],
            withdrawn: 0,
        }
    }

    /// `l` was marked a zombie at logical time `now` (before its block counts it).
    #[inline]
    pub fn marked(&mut self, l: usize, now: u64) {
        if self.marked_at.is_empty() {
            self.marked_at = vec![NONE; self.logical];
        }
        self.marked_at[l] = now;
    }

    /// Block `block` gained (`up`) or lost a zombie, `l`.
    #[inline]
    pub fn block_zombie(&mut self, block: u32, up: bool, l: usize) {
        let Some(&at) = self.marked_at.get(l) else {
            return;
        };
        if at == NONE {
            return;
        }
        let s = &mut self.mark_sum[block as usize];
        if up {
            *s += at;
        } else {
            *s -= at;
        }
    }

    /// Marked `l` died (written or trimmed) at `now` (after its block let it go).
    #[inline]
    pub fn died(&mut self, l: usize, now: u64) {
        if let Some(at) = self.take(l) {
            let life = now.saturating_sub(at);
            self.within += u64::from(life <= self.horizon);
            self.histogram[bucket(life)] += 1;
            self.deaths[bucket(life)] += self.inc;
            self.sampled();
        }
    }

    /// The host lost its dirty copy of marked `l` (after its block let it go): it did
    /// not die.
    #[inline]
    pub fn withdrawn(&mut self, l: usize) {
        if self.take(l).is_some() {
            self.withdrawn += 1;
            self.never += self.inc;
            self.sampled();
        }
    }

    /// Every mark is gone (a restart): no sample, nothing pending.
    pub fn forget_all(&mut self) {
        self.marked_at.fill(NONE);
        self.mark_sum.fill(0);
    }

    /// GC copied a known zombie.
    #[inline]
    pub fn copied(&mut self) {
        self.copies += 1;
    }

    fn take(&mut self, l: usize) -> Option<u64> {
        let at = std::mem::replace(self.marked_at.get_mut(l)?, NONE);
        (at != NONE).then_some(at)
    }

    fn sampled(&mut self) {
        self.taken += 1;
        self.inc /= DECAY;
        if self.inc > 1e200 {
            let k = 1.0 / self.inc;
            self.deaths.iter_mut().for_each(|d| *d *= k);
            self.never *= k;
            self.inc = 1.0;
        }
    }

    /// Every H/4 host writes: the chances anew from the samples, and the zombie block
    /// gate; whether they were renewed (then every block's weight is to be renewed).
    #[inline]
    pub fn refresh(&mut self, now: u64) -> bool {
        let span = now.saturating_sub(self.last_refresh);
        // Every quarter horizon, and sooner whenever the samples have doubled since the
        // last renewal (at first, when few are in, each sample moves the estimate most).
        let doubled = self.taken >= FIRST_SAMPLES && self.taken >= 2 * self.taken_at_refresh;
        if span == 0 || (span < self.horizon / 4 && !doubled) {
            return false;
        }
        self.taken_at_refresh = self.taken;
        self.last_refresh = now;
        let total: f64 = self.deaths.iter().sum::<f64>() + self.never;
        // Samples, in units of the newest one's weight.
        let n = total / self.inc;
        let trust = if n > 0.0 { n / (n + self.prior) } else { 0.0 };
        let mut alive = total;
        for k in 0..BUCKETS {
            // Zombies at least lo = 2^k − 1 writes old: those still alive then, and of
            // them those dead before lo + H.
            let lo = (1u64 << k) - 1;
            let limit = lo.saturating_add(self.horizon);
            let dying: f64 = (k..BUCKETS)
                .take_while(|&j| (1u64 << j) - 1 <= limit)
                .map(|j| self.deaths[j])
                .sum();
            self.chance[k] = if alive > 0.0 {
                (dying / alive).min(1.0) * trust
            } else {
                0.0
            };
            alive -= self.deaths[k];
        }
        self.rate += (self.copies as f64 / span as f64 - self.rate) / 4.0;
        self.copies = 0;
        let fills = self.rate * self.horizon as f64;
        if fills >= self.fill_pages {
            self.gate = true;
        } else if fills < self.fill_pages / 2.0 {
            self.gate = false;
        }
        true
    }

    /// The chance that a zombie `age` writes old dies within the horizon.
    #[inline]
    pub fn chance(&self, age: u64) -> f64 {
        self.chance[bucket(age)]
    }

    /// Block `block`'s `z` zombies, weighed by their chance at their mean age, and its
    /// other valid pages by their chances ([`LifeTable`], as last noted).
    #[inline]
    pub fn weighted(&self, block: u32, z: u32, now: u64) -> u32 {
        let others = self.pages.predicted(block);
        if z == 0 {
            return others;
        }
        let mean = self.mark_sum[block as usize] / z as u64;
        others + (z as f64 * self.chance(now.saturating_sub(mean))).round() as u32
    }

    /// What the request stream says of the blocks' other valid pages.
    pub fn pages(&self) -> &LifeTable {
        &self.pages
    }

    pub fn pages_mut(&mut self) -> &mut LifeTable {
        &mut self.pages
    }

    /// Whether GC sends zombie `l` to the zombie block at `now` (`gc.zombie_block`).
    #[inline]
    pub fn segregate(&self, l: usize, now: u64) -> bool {
        self.gate
            && self.marked_at.get(l).is_some_and(|&at| {
                at != NONE && self.chance(now.saturating_sub(at)) >= self.gate_chance
            })
    }

    /// The chance of a fresh zombie now.
    pub fn weight(&self) -> f64 {
        self.chance[0]
    }

    /// The GC horizon, host page writes.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// Samples taken, and of those the zombies that died within the horizon.
    pub fn counts(&self) -> (u64, u64) {
        (self.taken, self.within)
    }

    /// The run's zombie lifetimes: deaths per bucket `k` (lifetimes of `2^k − 1` to
    /// `2^(k+1) − 2` host page writes), up to the last non-empty one, and withdrawals.
    pub fn histogram(&self) -> (Vec<u64>, u64) {
        let used = self
            .histogram
            .iter()
            .rposition(|&c| c > 0)
            .map_or(0, |i| i + 1);
        (self.histogram[..used].to_vec(), self.withdrawn)
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        (self.marked_at.len() + self.mark_sum.len()) * 8 + self.pages.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chance_is_of_dying_within_the_horizon_at_the_zombies_age() {
        let mut p = ZombieLifetimes::new(100, 4, 100, 32);
        assert!(p.refresh(1_000));
        assert_eq!(p.weight(), 0.0);
        // Half the zombies die within 10 writes, half after 5,000 (a checkpoint).
        for i in 0..2_000u64 {
            p.marked(1, i);
            p.died(1, i + if i % 2 == 0 { 10 } else { 5_000 });
        }
        assert_eq!(p.counts(), (2_000, 1_000));
        assert!(p.refresh(2_000));
        // A fresh zombie: about half; one 1,000 writes old: none of those die soon.
        assert!((p.chance(0) - 0.5).abs() < 0.05, "{}", p.chance(0));
        assert!(p.chance(1_000) < 0.05, "{}", p.chance(1_000));
        // Past 4,095 writes old, the checkpoint is near: they die within the horizon.
        assert!(p.chance(4_095) > 0.9, "{}", p.chance(4_095));
        // A block of 3 zombies marked at 1,990..1,992, at 2,000 (9 old on average):
        // 3 × 0.48 (½, shrunk by the ~880 samples' trust) → 1; at 3,000 (1,000 old)
        // they count for nothing.
        for (l, at) in [(5, 1_990), (6, 1_991), (7, 1_992)] {
            p.marked(l, at);
            p.block_zombie(2, true, l);
        }
        assert_eq!(p.weighted(2, 3, 2_000), 1);
        assert_eq!(p.weighted(2, 3, 3_000), 0);
        // One leaves the block (GC moved it): the sum follows.
        p.block_zombie(2, false, 7);
        p.block_zombie(3, true, 7);
        assert_eq!(p.mark_sum[2], 1_990 + 1_991);
        // A withdrawn zombie is a "never" sample; a restart forgets what was pending.
        p.withdrawn(5);
        assert_eq!(p.counts().0, 2_001);
        p.forget_all();
        p.died(6, 2_500);
        assert_eq!(p.counts().0, 2_001);
        assert_eq!(p.mark_sum, vec![0; 4]);
    }

    #[test]
    fn the_chances_are_renewed_as_the_first_samples_double() {
        // Horizon 1,000: renewed every 250 writes, and sooner at 16, 32, 64, ... samples.
        let mut p = ZombieLifetimes::new(100, 4, 1_000, 32);
        let die = |p: &mut ZombieLifetimes, n: u64, at: u64| {
            for _ in 0..n {
                p.marked(1, at - 1);
                p.died(1, at);
            }
        };
        die(&mut p, 15, 10);
        assert!(!p.refresh(10), "15 samples: not yet");
        die(&mut p, 1, 11);
        assert!(p.refresh(11), "16 samples, 11 writes in");
        assert!(p.weight() > 0.3, "{}", p.weight());
        die(&mut p, 15, 12);
        assert!(!p.refresh(12), "31 samples");
        die(&mut p, 1, 12);
        assert!(p.refresh(12), "32");
        die(&mut p, 32, 12);
        assert!(
            !p.refresh(12),
            "doubled, but no write since the last renewal"
        );
        assert!(p.refresh(13), "64");
        // Between doublings the quarter horizon rules.
        die(&mut p, 10, 30);
        assert!(!p.refresh(30));
        assert!(!p.refresh(262));
        assert!(p.refresh(263), "a quarter horizon since the last renewal");
        assert_eq!(p.counts(), (74, 74));
    }

    #[test]
    fn the_zombie_block_gate_waits_for_copies_that_fill_it_within_the_horizon() {
        // Horizon 100 (refreshed every 25 writes), zombie blocks of 64 pages.
        let mut p = ZombieLifetimes::new(100, 4, 100, 64);
        for i in 0..2_000 {
            p.marked(1, i);
            p.died(1, i + 1);
        }
        p.refresh(2_000);
        p.marked(2, 2_000);
        assert!(!p.segregate(2, 2_000), "no copies yet");
        // One copy a write: 100 per horizon ≥ 64, once the smoothed rate has risen.
        for t in 2_000..2_400 {
            p.copied();
            p.refresh(t + 1);
        }
        p.marked(3, 2_400);
        assert!(p.segregate(3, 2_400));
        assert!(
            !p.segregate(2, 2_400),
            "2 is 400 writes old: those die at once or never"
        );
        // One every 4 writes: 25 per horizon, below half of 64: the gate closes.
        for t in (2_400..3_400).step_by(4) {
            p.copied();
            p.refresh(t);
        }
        p.marked(4, 3_400);
        assert!(!p.segregate(4, 3_400));
    }
}
