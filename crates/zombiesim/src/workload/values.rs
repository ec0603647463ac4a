//! Content fingerprints for synthetic writes: popular values, fresh values and rebirths.
//!
//! The `values` workload writes single pages at uniformly random addresses (reads and
//! trims as the common keys say); each write's content is drawn here:
//!
//! - with probability `unique`, a value never written before (a fresh counter, mixed);
//! - with probability `rebirth`, a value that *died* recently (no logical page holds it
//!   any more: every copy was overwritten or trimmed): a gap `g` is drawn from an
//!   exponential distribution of mean `gap` page writes, and the value written is the
//!   newest one that died at least `g` writes ago and is still dead (an address toggling
//!   back to an earlier content, content moving away and back; the recurring pages'
//!   values below are not among them). When no such value exists yet, the write draws
//!   from the catalog instead;
//! - with probability `recur`, a *recurring* write: one of `recur_pages` pages, rank `k`
//!   with probability ∝ `1 / k^recur_zipf`, is rewritten with the other of the two
//!   values it toggles between (an address going back to its earlier content). The
//!   page's previous value dies at that write and is reborn at the page's next
//!   recurring write, so the pages that recur often die and are reborn often and soon,
//!   and the rest at long gaps (001 Figs. 3c, 4b, 4c): the rebirths a small pool must
//!   tell apart by popularity, not recency (§IV-A, Figs. 5–6). The write goes to that
//!   page, not to the uniform address drawn for it;
//! - otherwise a value of a catalog of `catalog` values, rank `r` with probability
//!   ∝ `1 / r^zipf` (rand_distr's Zipf: rejection-inversion, O(1) per draw).
//!
//! The catalog's popular values are almost always live somewhere, so deduplication
//! catches their rewrites; rebirths write values that no live page holds, which only a
//! dead-value pool can catch (001 §VII, Fig. 13). To know which values are dead, the model
//! follows the logical contents (one word per logical page and a count per live value)
//! when `rebirth` > 0; with `rebirth` = 0 it keeps no state and draws exactly as before.
//!
//! Ranks are mixed into 64-bit fingerprints (SplitMix64 finaliser) under a per-run salt,
//! so fingerprints look like content hashes; the unique stream uses another salt so it
//! never meets the catalog. Address and value draws come from the same seeded stream,
//! so a spec and a seed give the same requests whatever the device does.

use super::permutation::Permutation;
use crate::fingerprint::FpMap;
use rand::RngExt;
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// Dead values remembered for rebirths, in multiples of `gap` (at least [`MIN_RING`]).
const RING_GAPS: f64 = 32.0;
/// The fewest dead values remembered.
const MIN_RING: usize = 4096;
/// Dead values looked at, newest first from the drawn gap, before giving up.
const PROBES: usize = 16;

/// The logical contents the rebirth component follows.
#[derive(Clone, Debug)]
struct Tracker {
    /// Mean death → rebirth gap in page writes.
    gap: f64,
    /// The value each logical page holds (0 = none known).
    page: Vec<u64>,
    /// Live copies of each value held by some page.
    live: FpMap<u32>,
    /// `(time of death, value)`, oldest first.
    deaths: VecDeque<(u64, u64)>,
    /// The recurring pages' values: their deaths are not remembered for the `rebirth`
    /// component (they come back through their own page).
    recurring: FpMap<()>,
    capacity: usize,
    /// Page writes so far.
    now: u64,
}

impl Tracker {
    fn new(gap: f64, logical_pages: u64) -> Tracker {
        Tracker {
            gap,
            page: vec![0; logical_pages as usize],
            live: FpMap::default(),
            deaths: VecDeque::new(),
            recurring: FpMap::default(),
            capacity: ((gap * RING_GAPS) as usize).max(MIN_RING),
            now: 0,
        }
    }

    /// Page `lpn` now holds `value` (`None`: trimmed).
    fn set(&mut self, lpn: u64, value: Option<u64>) {
        let Some(slot) = self.page.get_mut(lpn as usize) else {
            return;
        };
        let old = std::mem::replace(slot, value.unwrap_or(0));
        if let Some(v) = value {
            *self.live.entry(v).or_insert(0) += 1;
        }
        if old != 0 {
            let n = self.live.get_mut(&old).expect("a held value is counted");
            *n -= 1;
            if *n == 0 {
                self.live.remove(&old);
                if self.recurring.contains_key(&old) {
                    return;
                }
                if self.deaths.len() == self.capacity {
                    self.deaths.pop_front();
                }
                self.deaths.push_back((self.now, old));
            }
        }
    }

    /// A dead value that died about an exponential gap ago, if any.
    fn reborn(&mut self, rng: &mut Pcg64Mcg) -> Option<u64> {
        let u: f64 = rng.random();
        let g = (-self.gap * (1.0 - u).ln()) as u64;
        let cut = self.now.saturating_sub(g);
        let mut i = self.deaths.partition_point(|&(t, _)| t <= cut);
        if i == 0 {
            // Nothing died that long ago: the oldest remembered death.
            i = self.deaths.len().min(1);
        }
        for k in (i.saturating_sub(PROBES)..i).rev() {
            let v = self.deaths[k].1;
            if !self.live.contains_key(&v) {
                self.deaths.remove(k);
                return Some(v);
            }
        }
        None
    }
}

/// Pages that toggle between two values of their own.
#[derive(Clone, Debug)]
struct Recurring {
    /// Fraction of writes that are recurring writes.
    share: f64,
    /// Which page (rank 1 = the most often rewritten).
    rank: Zipf<f64>,
    /// Rank → logical page, spread over the space.
    place: Permutation,
    /// Per page (by rank − 1): which of its two values its next recurring write carries.
    phase: Vec<bool>,
    salt: u64,
}

impl Recurring {
    /// The page and value of the next recurring write.
    fn next(&mut self, rng: &mut Pcg64Mcg) -> (u64, u64) {
        let pages = self.phase.len() as u64;
        let k = (self.rank.sample(rng) as u64).clamp(1, pages) - 1;
        let phase = &mut self.phase[k as usize];
        let value = mix((k << 1 | *phase as u64) ^ self.salt).rotate_left(29) ^ 0x5A5A;
        *phase = !*phase;
        (self.place.apply(k), value)
    }
}

/// How a synthetic write's content fingerprint is drawn.
#[derive(Clone, Debug)]
pub struct ValueModel {
    unique: f64,
    rebirth: f64,
    zipf: Zipf<f64>,
    catalog: u64,
    next_unique: u64,
    salt: u64,
    tracker: Option<Tracker>,
    recurring: Option<Recurring>,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl ValueModel {
    /// `unique` in [0, 1], `zipf` ≥ 0 (0 = uniform over the catalog), `catalog` ≥ 1.
    pub fn new(unique: f64, zipf: f64, catalog: u64, seed: u64) -> ValueModel {
        ValueModel {
            unique,
            rebirth: 0.0,
            zipf: Zipf::new(catalog as f64, zipf).expect("zipf exponent checked when parsed"),
            catalog,
            next_unique: 0,
            salt: mix(seed ^ 0x7661_6c75_6573),
            tracker: None,
            recurring: None,
        }
    }

    /// A fraction `rebirth` of writes (`unique + rebirth` ≤ 1) rewrite a value that died
    /// a gap of mean `gap` page writes ago, on a space of `logical_pages` pages.
    pub fn with_rebirth(mut self, rebirth: f64, gap: f64, logical_pages: u64) -> ValueModel {
        self.rebirth = rebirth;
        self.tracker = (rebirth > 0.0).then(|| Tracker::new(gap, logical_pages));
        self
    }

    /// A fraction `share` of writes (`unique + rebirth + share` ≤ 1) are recurring
    /// writes to `pages` pages of the `logical_pages`, ranked by Zipf(`zipf`).
    pub fn with_recurring(
        mut self,
        share: f64,
        pages: u64,
        zipf: f64,
        logical_pages: u64,
    ) -> ValueModel {
        let pages = pages.min(logical_pages);
        self.recurring = (share > 0.0 && pages > 0).then(|| Recurring {
            share,
            rank: Zipf::new(pages as f64, zipf).expect("zipf exponent checked when parsed"),
            place: Permutation::new(logical_pages),
            phase: vec![false; pages as usize],
            salt: mix(self.salt ^ 0x0072_6563_7572),
        });
        self
    }

    /// The next write, drawn for logical page `lpn`: the page it goes to (`lpn` unless
    /// it is a recurring write) and its fingerprint.
    #[inline]
    pub fn draw(&mut self, rng: &mut Pcg64Mcg, lpn: u64) -> (u64, u64) {
        let (lpn, v, recurring) = self.pick(rng, lpn);
        if let Some(t) = &mut self.tracker {
            t.now += 1;
            if recurring {
                t.recurring.insert(v, ());
            }
            t.set(lpn, Some(v));
        }
        (lpn, v)
    }

    /// Pages `lpn .. lpn + pages` were trimmed.
    pub fn trimmed(&mut self, lpn: u64, pages: u64) {
        if let Some(t) = &mut self.tracker {
            for p in lpn..lpn + pages {
                t.set(p, None);
            }
        }
    }

    /// The page and value of the next write, and whether it is a recurring write.
    fn pick(&mut self, rng: &mut Pcg64Mcg, lpn: u64) -> (u64, u64, bool) {
        if self.unique > 0.0 || self.rebirth > 0.0 || self.recurring.is_some() {
            let u: f64 = rng.random();
            if u < self.unique {
                self.next_unique += 1;
                let v = mix(self.next_unique ^ !self.salt).rotate_left(17) ^ 0xA5A5;
                return (lpn, v, false);
            }
            if u < self.unique + self.rebirth {
                if let Some(v) = self.tracker.as_mut().and_then(|t| t.reborn(rng)) {
                    return (lpn, v, false);
                }
            } else if let Some(r) = &mut self.recurring {
                if u < self.unique + self.rebirth + r.share {
                    let (to, v) = r.next(rng);
                    return (to, v, true);
                }
            }
        }
        let rank = (self.zipf.sample(rng) as u64).clamp(1, self.catalog);
        (lpn, mix(rank.wrapping_add(self.salt)), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::collections::HashMap;

    #[test]
    fn unique_fraction_and_skew() {
        let mut m = ValueModel::new(0.3, 1.1, 1000, 7);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut counts: HashMap<u64, u32> = HashMap::new();
        let n = 100_000;
        for i in 0..n {
            *counts.entry(m.draw(&mut rng, i).1).or_default() += 1;
        }
        let once = counts.values().filter(|&&c| c == 1).count() as f64;
        // ~30% of writes are fresh values (plus a few rare catalog values seen once).
        assert!((0.29..0.33).contains(&(once / n as f64)), "{once}");
        let top = counts.values().copied().max().unwrap() as f64;
        assert!(
            top / n as f64 > 0.1,
            "zipf 1.1 puts >10% of writes on rank 1: {top}"
        );
        let all_unique = {
            let mut m = ValueModel::new(1.0, 1.1, 1000, 7);
            (0..1000)
                .map(|i| m.draw(&mut rng, i).1)
                .collect::<std::collections::HashSet<_>>()
        };
        assert_eq!(all_unique.len(), 1000);
    }

    /// Replays writes at uniform addresses and measures, per write, whether its value is
    /// live elsewhere (what dedup catches) or dead (a rebirth), and the median gap.
    fn replay(unique: f64, rebirth: f64, gap: f64) -> (f64, f64, f64, f64) {
        let pages = 20_000u64;
        let mut m = ValueModel::new(unique, 1.1, pages / 4, 3).with_rebirth(rebirth, gap, pages);
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let mut held = vec![0u64; pages as usize];
        let mut live: HashMap<u64, u32> = HashMap::new();
        let mut died: HashMap<u64, u64> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        let n = 200_000u64;
        let (mut dup, mut reborn, mut first) = (0u64, 0u64, 0u64);
        let mut gaps = Vec::new();
        for now in 0..n {
            let lpn = rng.random_range(0..pages);
            let (lpn, v) = m.draw(&mut rng, lpn);
            let old = std::mem::replace(&mut held[lpn as usize], v);
            if old != 0 {
                let c = live.get_mut(&old).unwrap();
                *c -= 1;
                if *c == 0 {
                    live.remove(&old);
                    died.insert(old, now);
                }
            }
            if now >= n / 2 {
                if !seen.contains(&v) {
                    first += 1;
                } else if live.contains_key(&v) {
                    dup += 1;
                } else {
                    reborn += 1;
                    gaps.push(now - died[&v]);
                }
            }
            seen.insert(v);
            *live.entry(v).or_insert(0) += 1;
        }
        let half = (n / 2) as f64;
        (
            first as f64 / half,
            dup as f64 / half,
            reborn as f64 / half,
            {
                gaps.sort_unstable();
                gaps[gaps.len() / 2] as f64
            },
        )
    }

    #[test]
    fn rebirths_rewrite_dead_values_at_the_fitted_gap() {
        let (first, dup, reborn, gap) = replay(0.3, 0.2, 50.0);
        // Rebirths are values no live page holds; a few catalog values die and come back
        // too (much later: they raise the mean gap, not the median), and the first draws
        // of the catalog count as first writes.
        assert!((0.19..0.26).contains(&reborn), "rebirth share {reborn}");
        assert!((0.30..0.36).contains(&first), "first writes {first}");
        assert!((0.42..0.50).contains(&dup), "live duplicates {dup}");
        // An exponential gap of mean 50 has median 50 ln 2 ≈ 35.
        assert!((25.0..50.0).contains(&gap), "median gap {gap}");
        // Without the component, only the catalog's rare values come back after dying.
        let (_, _, reborn0, _) = replay(0.3, 0.0, 50.0);
        assert!(reborn0 < 0.08 && reborn - reborn0 > 0.15, "{reborn0}");
    }

    #[test]
    fn recurring_pages_toggle_back_and_the_often_rewritten_ones_are_reborn_soonest() {
        let pages = 50_000u64;
        let recur_pages = 100u64;
        let mut m = ValueModel::new(0.2, 1.1, pages / 4, 3)
            .with_rebirth(0.2, 50.0, pages)
            .with_recurring(0.3, recur_pages, 1.0, pages);
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        // recurring page -> (the values written to it, recurring writes to it)
        let mut by_page: HashMap<u64, (Vec<u64>, u64)> = HashMap::new();
        let mut last_value: HashMap<u64, u64> = HashMap::new();
        let mut died: HashMap<u64, u64> = HashMap::new();
        let mut gaps: HashMap<u64, Vec<u64>> = HashMap::new();
        let n = 200_000u64;
        let mut moved = 0u64;
        let mut home: HashMap<u64, u64> = HashMap::new();
        for now in 0..n {
            let drawn = rng.random_range(0..pages);
            let (lpn, v) = m.draw(&mut rng, drawn);
            assert!(lpn < pages);
            // A recurring value is only ever written to its own page (the `rebirth`
            // component does not take it elsewhere).
            assert_eq!(
                *home.get(&v).unwrap_or(&lpn),
                lpn,
                "value {v:x} left its page"
            );
            if lpn != drawn {
                home.insert(v, lpn);
                moved += 1;
                let e = by_page.entry(lpn).or_default();
                if !e.0.contains(&v) {
                    e.0.push(v);
                }
                e.1 += 1;
                if let Some(&t) = died.get(&v) {
                    gaps.entry(lpn).or_default().push(now - t);
                }
            }
            if let Some(old) = last_value.insert(lpn, v) {
                if old != v {
                    died.insert(old, now);
                }
            }
        }
        // About 30% of writes recur (a few land on their own drawn page), on at most
        // 100 pages, each toggling between exactly two values.
        let share = moved as f64 / n as f64;
        assert!((0.28..0.31).contains(&share), "recurring share {share}");
        assert!(by_page.len() <= recur_pages as usize);
        assert!(by_page.values().all(|(vals, _)| vals.len() <= 2));
        // Zipf 1 over the pages: the busiest page is rewritten far more often than the
        // median one, and its values are reborn far sooner after they die.
        let mut busy: Vec<(u64, u64)> = by_page.iter().map(|(&p, e)| (e.1, p)).collect();
        busy.sort_unstable();
        let (top_writes, top) = busy[busy.len() - 1];
        let (mid_writes, mid) = busy[busy.len() / 2];
        assert!(top_writes > 10 * mid_writes, "{top_writes} vs {mid_writes}");
        let mean = |p: u64| {
            let g = &gaps[&p];
            g.iter().sum::<u64>() as f64 / g.len() as f64
        };
        assert!(
            mean(top) * 5.0 < mean(mid),
            "{} vs {}",
            mean(top),
            mean(mid)
        );
        // Without the key nothing moves and the draws are the same as before.
        let mut a = ValueModel::new(0.2, 1.1, 100, 5);
        let mut b = ValueModel::new(0.2, 1.1, 100, 5).with_recurring(0.0, 10, 1.0, 100);
        let (mut r1, mut r2) = (Pcg64Mcg::seed_from_u64(2), Pcg64Mcg::seed_from_u64(2));
        for i in 0..1000 {
            assert_eq!(a.draw(&mut r1, i % 100), b.draw(&mut r2, i % 100));
        }
    }

    #[test]
    fn no_rebirth_draws_as_before_and_trims_kill_values() {
        let mut a = ValueModel::new(0.3, 1.1, 100, 5);
        let mut b = ValueModel::new(0.3, 1.1, 100, 5).with_rebirth(0.0, 10.0, 100);
        let (mut r1, mut r2) = (Pcg64Mcg::seed_from_u64(2), Pcg64Mcg::seed_from_u64(2));
        for i in 0..1000 {
            assert_eq!(a.draw(&mut r1, i % 100), b.draw(&mut r2, i % 100));
        }
        let mut m = ValueModel::new(1.0, 1.1, 100, 5).with_rebirth(0.0, 10.0, 8);
        m.trimmed(0, 8);
        let mut m = ValueModel::new(0.0, 1.1, 100, 5).with_rebirth(1.0, 1.0, 8);
        let mut rng = Pcg64Mcg::seed_from_u64(4);
        let (_, v) = m.draw(&mut rng, 0); // nothing dead yet: a catalog value
        m.trimmed(0, 1);
        assert_eq!(m.draw(&mut rng, 1).1, v, "the trimmed value is reborn");
    }
}
