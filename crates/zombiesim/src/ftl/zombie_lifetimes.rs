//! How much a zombie is worth (`gc.zombie_weight = "lifetime"`): an online estimate of
//! the chance that a page the device knows as a zombie dies — is written back or
//! trimmed — within the GC horizon, learnt from the zombies seen so far. Nothing of the
//! future is read: each sample is taken when a zombie's fate is known.
//!
//! ```text
//!   notification "L is dirty above"  ──► marked_at[L] = now
//!   the device writes or trims L     ──► sample: died after now − marked_at[L] writes
//!                                        (a hit if within the horizon H)
//!   the host loses its dirty copy    ──► sample: a miss (the flash copy lives on)
//!   each sample: hits ← d·hits + hit,  n ← d·n + 1      (d = 1 − 1/1024: recent
//!                                                        samples count most)
//!   weight w = (hits / n) · n / (n + 32)    (shrunk to 0 while few zombies are seen)
//! ```
//!
//! z-greedy and z-cost-benefit then count `w·z` zombies in a block instead of `z`
//! (`FlashState::zombie_scale`, in 256ths, moved in steps of 1/16 so that the victim
//! index is re-keyed rarely), and GC copies known zombies to the zombie block only
//! while `w ≥ ½` and GC copies zombies fast enough to fill the zombie blocks (one per
//! plane) within the horizon — an open block is no GC candidate, so a zombie block
//! that fills slowly holds its dead pages, and spare space, for as long. With zombies
//! that outlive the horizon (database checkpoints minutes apart) or with hardly any
//! zombies known, the policy falls back to its base's choices (greedy, cost-benefit).
//!
//! ```text
//!   GC copies a known zombie        ──► copies += 1
//!   every H/4 host writes           ──► rate ← ½·rate + ½·copies/(H/4);  copies ← 0
//!   zombie block in use  ⇔  w ≥ ½  and  rate · H ≥ pages of the zombie blocks
//! ```
//!
//! H is the oracle's horizon: ¾ of the spare pages GC works with (an invalid page waits
//! about that many host writes before GC takes its block). Cost: O(1) per notification
//! and per write of a marked page; 8 bytes a logical page, allocated on the first mark.

/// Samples whose weight halves in about 710 samples.
const DECAY: f64 = 1.0 - 1.0 / 1024.0;
/// Samples at which the estimate is trusted half.
const PRIOR: f64 = 32.0;
/// Not marked.
const NONE: u64 = u64::MAX;

/// The online estimate of a zombie's chance to die within the GC horizon.
#[derive(Clone, Debug)]
pub struct ZombieLifetimes {
    horizon: u64,
    /// Pages of the zombie blocks (one per plane).
    fill_pages: f64,
    /// GC copies of known zombies since `window_start`, and their smoothed rate per
    /// host page write.
    copies: u64,
    window_start: u64,
    rate: f64,
    marked_at: Vec<u64>,
    logical: usize,
    hits: f64,
    samples: f64,
    /// Samples taken, and of those, zombies that died within the horizon.
    taken: u64,
    within: u64,
}

impl ZombieLifetimes {
    /// For `logical` pages, GC horizon `horizon` (host page writes) and zombie blocks
    /// of `fill_pages` pages in all.
    pub fn new(logical: usize, horizon: u64, fill_pages: u64) -> Self {
        ZombieLifetimes {
            horizon: horizon.max(1),
            fill_pages: fill_pages as f64,
            copies: 0,
            window_start: 0,
            rate: 0.0,
            marked_at: Vec::new(),
            logical,
            hits: 0.0,
            samples: 0.0,
            taken: 0,
            within: 0,
        }
    }

    /// `l` was marked a zombie at logical time `now`.
    #[inline]
    pub fn marked(&mut self, l: usize, now: u64) {
        if self.marked_at.is_empty() {
            self.marked_at = vec![NONE; self.logical];
        }
        self.marked_at[l] = now;
    }

    /// Marked `l` died (written or trimmed) at `now`.
    #[inline]
    pub fn died(&mut self, l: usize, now: u64) {
        if let Some(at) = self.take(l) {
            self.sample(now.saturating_sub(at) <= self.horizon);
        }
    }

    /// The host lost its dirty copy of marked `l`: it did not die.
    #[inline]
    pub fn withdrawn(&mut self, l: usize) {
        if self.take(l).is_some() {
            self.sample(false);
        }
    }

    /// GC copied a known zombie at `now`.
    #[inline]
    pub fn copied(&mut self, now: u64) {
        self.copies += 1;
        self.tick(now);
    }

    /// Close the rate's window if a quarter horizon has passed.
    #[inline]
    fn tick(&mut self, now: u64) {
        let span = now.saturating_sub(self.window_start);
        if span >= (self.horizon / 4).max(1) {
            self.rate = 0.5 * self.rate + 0.5 * self.copies as f64 / span as f64;
            self.copies = 0;
            self.window_start = now;
        }
    }

    /// Whether GC should send known zombies to the zombie block at `now`: they are
    /// worth it, and come fast enough to fill it within the horizon.
    #[inline]
    pub fn segregate(&mut self, now: u64) -> bool {
        self.tick(now);
        self.weight() >= 0.5 && self.rate * self.horizon as f64 >= self.fill_pages
    }

    /// Every mark is gone (a restart): no sample, nothing pending.
    pub fn forget_all(&mut self) {
        self.marked_at.fill(NONE);
    }

    fn take(&mut self, l: usize) -> Option<u64> {
        let at = std::mem::replace(self.marked_at.get_mut(l)?, NONE);
        (at != NONE).then_some(at)
    }

    fn sample(&mut self, hit: bool) {
        self.hits = DECAY * self.hits + f64::from(u8::from(hit));
        self.samples = DECAY * self.samples + 1.0;
        self.taken += 1;
        self.within += u64::from(hit);
    }

    /// The weight of a zombie now, 0 to 1.
    pub fn weight(&self) -> f64 {
        if self.samples == 0.0 {
            return 0.0;
        }
        let p = self.hits / self.samples;
        p * self.samples / (self.samples + PRIOR)
    }

    /// The weight in 256ths, in steps of 16.
    pub fn scale(&self) -> u32 {
        ((self.weight() * 16.0).round() as u32 * 16).min(256)
    }

    /// The GC horizon, host page writes.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// Samples taken, and of those the zombies that died within the horizon.
    pub fn counts(&self) -> (u64, u64) {
        (self.taken, self.within)
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.marked_at.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weight_is_the_share_dying_within_the_horizon_once_enough_are_seen() {
        let mut p = ZombieLifetimes::new(100, 50, 64);
        assert_eq!(p.weight(), 0.0);
        // Three of four zombies die within 50 writes, the fourth after 80; then one is
        // withdrawn. Few samples: the weight stays near 0.
        for (l, life) in [(1, 10), (2, 50), (3, 20), (4, 80)] {
            p.marked(l, 1_000);
            p.died(l, 1_000 + life);
        }
        p.marked(5, 1_000);
        p.withdrawn(5);
        // A page never marked, or dying twice, is no sample.
        p.died(6, 2_000);
        p.died(1, 2_000);
        assert_eq!(p.counts(), (5, 3));
        assert!(p.weight() > 0.0 && p.weight() < 0.1, "{}", p.weight());
        // Many zombies dying at once: the weight goes towards 1 and the scale to 256.
        for i in 0..5_000 {
            p.marked(7, i);
            p.died(7, i + 1);
        }
        assert!(p.weight() > 0.95 && p.scale() == 256, "{}", p.weight());
        // Then only zombies that outlive the horizon: the recent ones count most.
        for i in 0..5_000 {
            p.marked(8, i);
            p.died(8, i + 500);
        }
        assert!(p.weight() < 0.05 && p.scale() == 0, "{}", p.weight());
        // The zombie block waits for zombie copies that fill it (32 pages) within
        // the horizon (50): 1 copy a write, then 1 every 4 writes.
        let mut q = ZombieLifetimes::new(100, 50, 32);
        for i in 0..5_000 {
            q.marked(7, i);
            q.died(7, i + 1);
        }
        assert!(!q.segregate(5_000));
        for t in 5_000..5_200 {
            q.copied(t);
        }
        assert!(q.segregate(5_200));
        for t in (5_200..6_000).step_by(4) {
            q.copied(t);
        }
        assert!(!q.segregate(6_000));
        // A restart forgets what was pending.
        p.marked(9, 0);
        p.forget_all();
        p.died(9, 1);
        assert_eq!(p.counts().0, 10_005);
    }
}
