//! MiDAS's models (Oh et al., FAST'24): the update-interval distribution of host writes
//! (UID), the chain's write amplification predicted from it (MCAM), and the search for
//! the group sizes that minimise it (GCS).
//!
//! ```text
//!   UID    S(a): the share of host writes whose page is still valid at age a
//!          (Kaplan–Meier over sampled pages: each interval enters observation at its
//!           age when the epoch began, leaves it when overwritten or at the epoch's end)
//!
//!   MCAM   FIFO groups 0 .. m−1 of s_i blocks, then a tail of the remaining blocks:
//!            r_i   = S(A_i)                      inflow of group i per host write
//!            A_i+1 = A_i + (s_i − ½)·P / r_i     age at which group i erases a block
//!            v_i   = S(A_i+1) / S(A_i)           its valid share then (r_i+1 = r_i·v_i)
//!            V_i   = ∫ S(a) da over [A_i, A_i+1) its valid pages
//!          static pages: live − ∫₀^∞ S: pages the write stream does not keep
//!                valid (past the histogram's ages the last hazard goes on); greedy
//!                leaves them in full blocks
//!          tail: greedy on s_tail·P − static pages holding ∫_{A_m}^∞ S valid ones
//!                (Desnoyers' uniform model, `analytic::wa_greedy_approx`)
//!          WAF = Σ_{i<m} r_i + r_m · WAF_tail
//!          (no FIFO group may end past the oldest age the histogram holds)
//!
//!   GCS    groups are added one at a time, each new group's size searched with the
//!          others fixed, then every size refined in turn; the best count wins
//! ```
//!
//! The age unit is host page writes; a segment of the paper is a block here. The
//! authors' simulator (sungkyun123/MiDAS-Simulation) takes the pages of segments no
//! write has touched out of the last group's model too (its "no-access" pages); with
//! them in, the uniform model predicts a WAF three times what greedy measures on a
//! capture whose writes leave most of the data alone (docs/lifetimes.md). Where the
//! authors fit the rest of the tail to a two-class hot/cold model and keep a HOT group,
//! this model uses the uniform one and no HOT group.

use crate::analytic::wa_greedy_approx;

/// The survival curve learnt over one epoch, on bins of `width` host page writes.
#[derive(Clone, Debug, Default)]
pub struct Survival {
    width: f64,
    /// S at each bin boundary: `s[j]` = S(j · width), `s[0]` = 1.
    s: Vec<f64>,
    /// ∫₀^{j·width} S, by the trapezoid rule.
    integral: Vec<f64>,
    /// ∫ S past the last bin, the last quarter's hazard going on (none when S no
    /// longer falls there: the writes still valid then are never overwritten).
    beyond: f64,
}

impl Survival {
    /// The Kaplan–Meier curve from, per age bin: intervals entering observation
    /// (`enter`), overwritten (`died`) and still open at the epoch's end (`censored`).
    /// Past the oldest age still observed, the hazard of the last quarter of the
    /// observed ages goes on (an exponential tail), rather than no page dying there.
    pub fn kaplan_meier(width: u64, enter: &[f64], died: &[f64], censored: &[f64]) -> Self {
        let n = enter.len();
        let mut s = Vec::with_capacity(n + 1);
        let mut at_risk = 0f64;
        let mut surv = 1.0f64;
        let mut observed = 0;
        s.push(1.0);
        for j in 0..n {
            at_risk += enter[j];
            if at_risk > 1e-9 {
                surv *= 1.0 - (died[j] / at_risk).min(1.0);
                observed = j + 1;
            }
            at_risk -= died[j] + censored[j];
            s.push(surv.max(0.0));
        }
        let from = observed - observed / 4;
        if observed < n && observed > from && s[observed] > 0.0 && s[from] > 0.0 {
            let per_bin = (s[observed] / s[from]).ln() / (observed - from) as f64;
            for j in observed + 1..=n {
                s[j] = s[observed] * (per_bin * (j - observed) as f64).exp();
            }
        }
        Self::from_points(width as f64, s)
    }

    /// A curve from its values at the bin boundaries.
    pub fn from_points(width: f64, s: Vec<f64>) -> Self {
        let mut integral = Vec::with_capacity(s.len());
        integral.push(0.0);
        for j in 1..s.len() {
            integral.push(integral[j - 1] + width * (s[j - 1] + s[j]) / 2.0);
        }
        let n = s.len() - 1;
        let from = n - n / 4;
        let beyond = if from < n && s[n] > 0.0 && s[from] > s[n] {
            let rate = (s[from] / s[n]).ln() / ((n - from) as f64 * width);
            s[n] / rate
        } else {
            0.0
        };
        Survival {
            width,
            s,
            integral,
            beyond,
        }
    }

    /// ∫₀^∞ S: the pages the write stream keeps valid (per host write of rate one),
    /// the last quarter's hazard going on past the last bin.
    pub fn kept(&self) -> f64 {
        self.integral[self.s.len() - 1] + self.beyond
    }

    /// S(a), linear between bin boundaries and flat beyond the last.
    pub fn at(&self, a: f64) -> f64 {
        let x = a / self.width;
        let j = x.floor() as usize;
        if j + 1 >= self.s.len() {
            return *self.s.last().unwrap_or(&1.0);
        }
        let f = x - j as f64;
        self.s[j] + f * (self.s[j + 1] - self.s[j])
    }

    /// The oldest age the curve knows of (past it S is extrapolated).
    pub fn range(&self) -> f64 {
        (self.s.len() - 1) as f64 * self.width
    }

    /// ∫₀^a S.
    pub fn integral(&self, a: f64) -> f64 {
        let x = a / self.width;
        let j = x.floor() as usize;
        if j + 1 >= self.s.len() {
            let last = self.s.len() - 1;
            return self.integral[last] + (a - last as f64 * self.width) * self.s[last];
        }
        let f = x - j as f64;
        let end = self.s[j] + f * (self.s[j + 1] - self.s[j]);
        self.integral[j] + f * self.width * (self.s[j] + end) / 2.0
    }
}

/// What the chain is predicted to do with a set of group sizes (MCAM).
pub struct Chain<'a> {
    pub survival: &'a Survival,
    /// Blocks the groups share (the device's usable blocks less GC's free reserve).
    pub blocks: u32,
    pub pages_per_block: u32,
    /// Valid pages on the device.
    pub live: f64,
}

impl Chain<'_> {
    /// Live pages the write stream does not keep valid: static, and greedy copies
    /// none of them.
    pub fn static_pages(&self) -> f64 {
        (self.live - self.survival.kept()).max(0.0)
    }

    /// The WAF of FIFO groups of `sizes` blocks followed by a tail of the rest; `None`
    /// when the configuration cannot hold the live data.
    pub fn waf(&self, sizes: &[u32]) -> Option<f64> {
        let used: u32 = sizes.iter().sum();
        if used >= self.blocks {
            return None;
        }
        let p = f64::from(self.pages_per_block);
        let (mut age, mut waf, mut valid) = (0.0f64, 0.0f64, 0.0f64);
        for &s in sizes {
            let r = self.survival.at(age);
            if r < 1e-9 {
                return None;
            }
            let end = age + (f64::from(s) - 0.5) * p / r;
            if end > self.survival.range() {
                // A group the update intervals seen cannot tell about.
                return None;
            }
            valid += self.survival.integral(end) - self.survival.integral(age);
            waf += r;
            age = end;
        }
        let fixed = self.static_pages();
        let tail_pages = f64::from(self.blocks - used) * p - fixed;
        let tail_valid = self.live - fixed - valid;
        if tail_pages <= 0.0 {
            return None;
        }
        let tail = if tail_valid <= 0.0 {
            1.0
        } else {
            let alpha = tail_pages / tail_valid;
            if alpha <= 1.0 + 1e-9 {
                return None;
            }
            // (The approximation dips below 1 when the tail is mostly spare; each
            // page reaching it is written there at least once.)
            wa_greedy_approx(alpha, self.pages_per_block).max(1.0)
        };
        let w = waf + self.survival.at(age) * tail;
        w.is_finite().then_some(w)
    }

    /// The best size for group `i` of `sizes` (the others fixed) and its WAF: a scan
    /// over the sizes left at a step of 1/512 of them, refined around the best.
    fn best_size(&self, sizes: &mut [u32], i: usize) -> Option<(u32, f64)> {
        let others: u32 = sizes.iter().sum::<u32>() - sizes[i];
        let room = self.blocks.checked_sub(others + 1)?;
        if room == 0 {
            return None;
        }
        let step = (room / 512).max(1);
        let mut best: Option<(u32, f64)> = None;
        let try_size = |s: u32, sizes: &mut [u32], best: &mut Option<(u32, f64)>| {
            sizes[i] = s;
            if let Some(w) = self.waf(sizes) {
                if best.is_none_or(|(_, bw)| w < bw) {
                    *best = Some((s, w));
                }
            }
        };
        let mut s = 1;
        while s <= room {
            try_size(s, sizes, &mut best);
            s += step;
        }
        if step > 1 {
            if let Some((b, _)) = best {
                for s in b.saturating_sub(step).max(1)..=(b + step).min(room) {
                    try_size(s, sizes, &mut best);
                }
            }
        }
        best
    }

    /// GCS: the sizes of at most `max_fifo` FIFO groups with the least predicted WAF
    /// (none: the tail's policy over the whole device), and that WAF.
    pub fn search(&self, max_fifo: usize) -> Option<(Vec<u32>, f64)> {
        let mut sizes: Vec<u32> = Vec::new();
        let mut best: Option<(Vec<u32>, f64)> = self.waf(&[]).map(|w| (Vec::new(), w));
        for m in 1..=max_fifo {
            sizes.push(1);
            let Some((s, _)) = self.best_size(&mut sizes, m - 1) else {
                sizes.pop();
                break;
            };
            sizes[m - 1] = s;
            // Refine every size in turn, twice.
            let mut waf = self.waf(&sizes)?;
            for _ in 0..2 {
                for i in 0..m {
                    if let Some((s, w)) = self.best_size(&mut sizes, i) {
                        sizes[i] = s;
                        waf = w;
                    }
                }
            }
            if best.as_ref().is_none_or(|(_, bw)| waf < *bw) {
                best = Some((sizes.clone(), waf));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kaplan_meier_without_censoring_is_the_empirical_survival() {
        // Ten intervals: 4 end in bin 0, 3 in bin 1, 3 in bin 2.
        let s = Survival::kaplan_meier(10, &[10.0, 0.0, 0.0], &[4.0, 3.0, 3.0], &[0.0; 3]);
        assert_eq!(s.s, vec![1.0, 0.6, 0.3, 0.0]);
        assert!((s.at(15.0) - 0.45).abs() < 1e-12);
        // ∫ over [0, 30] by trapezoids: 10·(0.8 + 0.45 + 0.15).
        assert!((s.integral(30.0) - 14.0).abs() < 1e-12);
        assert!((s.integral(40.0) - 14.0).abs() < 1e-12);
    }

    #[test]
    fn kaplan_meier_counts_censored_and_late_entries_only_while_observed() {
        // Bin 0: 4 enter, 2 die, 2 are censored; bin 1: 2 enter late, 1 dies.
        let s = Survival::kaplan_meier(1, &[4.0, 2.0], &[2.0, 1.0], &[2.0, 0.0]);
        assert_eq!(s.s, vec![1.0, 0.5, 0.25]);
    }

    #[test]
    fn past_the_observed_ages_the_last_hazard_goes_on() {
        // Observed over bins 0..4 (halving each bin), nothing at risk after.
        let s = Survival::kaplan_meier(
            1,
            &[16.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            &[8.0, 4.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0],
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        );
        let want = [
            1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
        ];
        for (got, want) in s.s.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{:?}", s.s);
        }
    }

    /// A chain over 160 blocks of 64 pages holding `live` pages, whose survival is
    /// `survival(age)` on bins of 16 host writes up to `bins`.
    fn chain_over(live: f64, bins: usize, survival: impl Fn(f64) -> f64) -> (Survival, f64) {
        let width = 16.0;
        let s = (0..bins).map(|j| survival(j as f64 * width)).collect();
        let greedy = wa_greedy_approx(160.0 * 64.0 / live, 64);
        (Survival::from_points(width, s), greedy)
    }

    fn chain(survival: &Survival, live: f64) -> Chain<'_> {
        Chain {
            survival,
            blocks: 160,
            pages_per_block: 64,
            live,
        }
    }

    #[test]
    fn with_uniform_overwrites_the_tail_alone_is_greedy_and_a_chain_adds_nothing() {
        // Uniform random overwrites of L live pages: S(a) = exp(−a/L).
        let live = 8_192.0;
        let (survival, greedy) = chain_over(live, 4_000, |a| (-a / live).exp());
        let chain = chain(&survival, live);
        assert!((chain.waf(&[]).unwrap() - greedy).abs() < 1e-3 * greedy);
        // One block of group 0: its pages barely age, so nearly all are copied once
        // more on their way to the tail.
        let one = chain.waf(&[1]).unwrap();
        assert!((one - (1.0 + greedy)).abs() < 0.05, "{one} vs 1 + {greedy}");
        let (sizes, waf) = chain.search(4).unwrap();
        assert!(
            sizes.is_empty() && waf == chain.waf(&[]).unwrap(),
            "{sizes:?}: {waf}"
        );
    }

    #[test]
    fn pages_the_writes_leave_alone_take_room_in_the_tail_but_are_not_copied() {
        // 8,192 live pages, of which the writes overwrite 4,096 uniformly; the other
        // 4,096 were written once (the fill) and never again.
        let (live, dynamic) = (8_192.0, 4_096.0);
        let (survival, _) = chain_over(live, 4_000, |a| (-a / dynamic).exp());
        let chain = chain(&survival, live);
        // Greedy on the room the static half leaves: 160·64 − 4,096 pages for 4,096.
        let want = wa_greedy_approx((160.0 * 64.0 - 4_096.0) / dynamic, 64);
        let got = chain.waf(&[]).unwrap();
        assert!((got - want).abs() < 1e-3 * want, "{got} vs {want}");
        assert!((chain.static_pages() - 4_096.0).abs() < 1.0);
        // Well below greedy over all of it as if every page were overwritten alike
        // (1.68 against 2.60).
        assert!(
            got < 0.7 * wa_greedy_approx(160.0 * 64.0 / live, 64),
            "{got}"
        );
        // A FIFO group cannot take the room the static pages fill.
        assert!(chain.waf(&[100]).is_none());
        // Pages rewritten after longer than the curve's range are not static: past it
        // the hazard of its last quarter goes on (half the writes live 1,000 on
        // average, half 500,000, eight times the 64,000 the bins reach).
        let (h, c) = (1_000.0f64, 500_000.0f64);
        let (survival, _) =
            chain_over(live, 4_000, |a| 0.5 * (-a / h).exp() + 0.5 * (-a / c).exp());
        let kept = survival.kept();
        assert!((kept / (0.5 * h + 0.5 * c) - 1.0).abs() < 0.01, "{kept}");
    }

    #[test]
    fn with_hot_and_cold_pages_the_search_finds_a_chain_better_than_greedy() {
        // 90% of writes to 10% of pages (hot: lifetime L/9·0.1, cold: much longer).
        let live = 8_192.0f64;
        let (hot_rate, cold_rate) = (0.9 / (0.1 * live), 0.1 / (0.9 * live));
        let (survival, greedy) = chain_over(live, 20_000, |a| {
            0.9 * (-a * hot_rate).exp() + 0.1 * (-a * cold_rate).exp()
        });
        let chain = chain(&survival, live);
        let (sizes, waf) = chain.search(6).unwrap();
        assert!(sizes.iter().all(|&s| s >= 1));
        assert!(sizes.iter().sum::<u32>() < 160);
        assert!(waf < 0.8 * greedy, "{sizes:?}: {waf} vs greedy {greedy}");
    }

    proptest::proptest! {
        /// On any survival curve (falling from 1, possibly to a plateau) and any share
        /// of the device live, the model's WAF is at least 1 wherever it is defined,
        /// the static pages lie within the live ones, and the search returns a
        /// configuration whose prediction is the WAF it reports and no worse than the
        /// last group alone.
        #[test]
        fn the_model_predicts_at_least_one_and_the_search_keeps_its_word(
            drops in proptest::collection::vec(0.0f64..0.2, 8..200),
            plateau in 0.0f64..0.6,
            live_share in 0.2f64..0.95,
        ) {
            let mut s = vec![1.0f64];
            for d in &drops {
                let last = *s.last().unwrap();
                s.push((last - d * (last - plateau)).max(0.0));
            }
            let survival = Survival::from_points(64.0, s);
            let live = live_share * 160.0 * 64.0;
            let chain = chain(&survival, live);
            let fixed = chain.static_pages();
            proptest::prop_assert!((0.0..=live).contains(&fixed), "{fixed} of {live}");
            for sizes in [&[][..], &[1][..], &[10, 5][..], &[40, 20, 10][..]] {
                if let Some(w) = chain.waf(sizes) {
                    proptest::prop_assert!(w >= 1.0 - 1e-9 && w.is_finite(), "{sizes:?}: {w}");
                }
            }
            if let Some((sizes, w)) = chain.search(4) {
                proptest::prop_assert_eq!(chain.waf(&sizes), Some(w));
                if let Some(alone) = chain.waf(&[]) {
                    proptest::prop_assert!(w <= alone, "{sizes:?}: {w} against {alone}");
                }
            }
        }
    }
}
