//! The `footprint` address model: a written footprint that grows at a chosen rate.
//!
//! Block traces differ most in how fast the set of distinct pages they have written
//! grows with the number of writes: most grow very slowly (nearly every write re-hits a
//! recently written page), some grow moderately with pauses, a few grow linearly. This
//! model makes that rate a knob.
//!
//! ```text
//!  fresh order (a fixed scrambling of the slots):  s0 s1 s2 ... s[f-w] ... s[f-1] | s[f] ...
//!                                                  └── footprint (f slots) ──────┘   next fresh
//!                                                              └─ window (w) ───┘
//!                                                                rank w-1 ... 0 (newest)
//! ```
//!
//! A write is *fresh* with probability `growth` (0 during a paused phase): it takes the
//! next slot of the fresh order, so the footprint grows by one request. Otherwise it
//! rewrites one of the `window` newest fresh slots, uniformly or Zipf(`theta`) over
//! recency rank (rank 0 = newest). Until the window is full every write is fresh. After
//! every slot has been written once, fresh writes wrap to the start of the order.
//!
//! The order is [`Permutation`], so consecutive fresh slots land all over the space, and
//! the window is the stretch of the order just behind the fresh cursor: a rank maps to a
//! slot by one permutation lookup, so the model keeps no list of pages (O(1) time and
//! memory per request, whatever the window's size).

use super::permutation::Permutation;
use rand::RngExt;
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

/// The `footprint` model's state, over the workload's request-sized slots.
#[derive(Clone, Debug)]
pub(super) struct Footprint {
    order: Permutation,
    slots: u64,
    growth: f64,
    /// Window size in slots (1..=slots).
    window: u64,
    /// Zipf over recency ranks 1..=window (`None`: uniform).
    rank: Option<Zipf<f64>>,
    /// Pages written per phase (0: one endless phase).
    phase_pages: u64,
    pause: f64,
    /// Fresh writes so far: the next fresh slot is `order[fresh % slots]`.
    fresh: u64,
}

impl Footprint {
    /// `growth` and `pause` in [0, 1], `window` ≥ 1 slot, `theta` ≥ 0 (0 = uniform).
    pub(super) fn new(
        slots: u64,
        growth: f64,
        window: u64,
        theta: f64,
        phase_pages: u64,
        pause: f64,
    ) -> Self {
        let window = window.clamp(1, slots);
        Footprint {
            order: Permutation::new(slots),
            slots,
            growth,
            window,
            rank: (theta > 0.0)
                .then(|| Zipf::new(window as f64, theta).expect("theta checked when parsed")),
            phase_pages,
            pause,
            fresh: 0,
        }
    }

    /// Phase `i` (from 0) pauses when ⌊(i+1)·pause⌋ > ⌊i·pause⌋: a fraction `pause` of
    /// the phases, spread evenly, the first one always growing.
    fn paused(&self, written_pages: u64) -> bool {
        if self.phase_pages == 0 || self.pause == 0.0 {
            return false;
        }
        let i = (written_pages / self.phase_pages) as f64;
        ((i + 1.0) * self.pause).floor() > (i * self.pause).floor()
    }

    /// The slot of the next write, `written_pages` having been written so far.
    #[inline]
    pub(super) fn write(&mut self, rng: &mut Pcg64Mcg, written_pages: u64) -> u64 {
        let fresh = self.fresh < self.window
            || (!self.paused(written_pages) && rng.random::<f64>() < self.growth);
        if fresh {
            let slot = self.order.apply(self.fresh % self.slots);
            self.fresh += 1;
            return slot;
        }
        let r = match &self.rank {
            None => rng.random_range(0..self.window),
            Some(z) => (z.sample(rng) as u64).clamp(1, self.window) - 1,
        };
        // fresh ≥ window > r here.
        self.order.apply((self.fresh - 1 - r) % self.slots)
    }

    /// A read's (or trim's) slot: uniform over the footprint, or over the space while
    /// nothing has been written.
    #[inline]
    pub(super) fn read(&self, rng: &mut Pcg64Mcg) -> u64 {
        match self.fresh.min(self.slots) {
            0 => rng.random_range(0..self.slots),
            n => self.order.apply(rng.random_range(0..n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Op, Request, Workload, WorkloadSpec};
    use proptest::prelude::*;
    use rand::SeedableRng;

    fn footprint_after(model: &mut Footprint, writes: u64) -> u64 {
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut seen = vec![false; model.slots as usize];
        for w in 0..writes {
            seen[model.write(&mut rng, w) as usize] = true;
        }
        seen.iter().filter(|&&s| s).count() as u64
    }

    #[test]
    fn the_window_fills_fresh_then_growth_zero_stays_put() {
        let mut m = Footprint::new(1000, 0.0, 50, 0.0, 0, 0.0);
        assert_eq!(footprint_after(&mut m, 50), 50);
        let mut m = Footprint::new(1000, 0.0, 50, 0.0, 0, 0.0);
        assert_eq!(footprint_after(&mut m, 10_000), 50);
    }

    #[test]
    fn growth_one_covers_the_space_then_wraps() {
        let mut m = Footprint::new(1000, 1.0, 10, 0.0, 0, 0.0);
        assert_eq!(footprint_after(&mut m, 999), 999);
        let mut m = Footprint::new(1000, 1.0, 10, 0.0, 0, 0.0);
        assert_eq!(footprint_after(&mut m, 5000), 1000);
        // After wrapping, the fresh order starts over.
        let mut m = Footprint::new(1000, 1.0, 10, 0.0, 0, 0.0);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let first: Vec<u64> = (0..5).map(|w| m.write(&mut rng, w)).collect();
        for w in 5..1000 {
            m.write(&mut rng, w);
        }
        let again: Vec<u64> = (0..5).map(|w| m.write(&mut rng, 1000 + w)).collect();
        assert_eq!(first, again);
    }

    #[test]
    fn a_window_larger_than_the_space_is_the_space() {
        let mut m = Footprint::new(100, 0.0, 1 << 40, 0.0, 0, 0.0);
        assert_eq!(m.window, 100);
        assert_eq!(footprint_after(&mut m, 10_000), 100);
    }

    #[test]
    fn pauses_alternate_with_half_the_phases() {
        let m = Footprint::new(1000, 0.5, 10, 0.0, 100, 0.5);
        let paused: Vec<bool> = (0..6).map(|i| m.paused(i * 100 + 99)).collect();
        assert_eq!(paused, [false, true, false, true, false, true]);
        let m = Footprint::new(1000, 0.5, 10, 0.0, 100, 0.25);
        let paused: Vec<bool> = (0..8).map(|i| m.paused(i * 100)).collect();
        assert_eq!(
            paused,
            [false, false, false, true, false, false, false, true]
        );
        let m = Footprint::new(1000, 0.5, 10, 0.0, 0, 0.5);
        assert!(!m.paused(150));
    }

    #[test]
    fn reads_stay_in_the_footprint() {
        let mut m = Footprint::new(10_000, 0.1, 20, 0.0, 0, 0.0);
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let mut seen = vec![false; 10_000];
        for w in 0..2000 {
            seen[m.write(&mut rng, w) as usize] = true;
        }
        for _ in 0..5000 {
            assert!(seen[m.read(&mut rng) as usize]);
        }
    }

    /// Through the spec: requests on a device of `pages` 4 KiB pages.
    fn requests(spec: &str, pages: u64, seed: u64) -> Vec<Request> {
        let mut w = WorkloadSpec::parse(spec)
            .unwrap()
            .build(pages, 4096, seed)
            .unwrap();
        std::iter::from_fn(|| w.next_request().unwrap()).collect()
    }

    /// Distinct pages written after each request.
    fn footprint_curve(reqs: &[Request], pages: u64) -> Vec<u64> {
        let mut seen = vec![false; pages as usize];
        let mut n = 0;
        reqs.iter()
            .map(|r| {
                if r.op == Op::Write {
                    for p in r.lpn..r.lpn + r.pages as u64 {
                        n += u64::from(!std::mem::replace(&mut seen[p as usize], true));
                    }
                }
                n
            })
            .collect()
    }

    #[test]
    fn the_footprint_grows_by_growth_times_the_writes() {
        const PAGES: u64 = 1 << 18; // 1 GiB
        const W: f64 = 100_000.0; // page writes
        for (growth, size) in [(0.01, 1), (0.2, 1), (1.0, 1), (0.2, 4), (0.01, 4)] {
            let spec = format!(
                "footprint:growth={growth},window=4MiB,size={}KiB,bytes={}",
                4 * size,
                W as u64 * 4096
            );
            let reqs = requests(&spec, PAGES, 1);
            let got = *footprint_curve(&reqs, PAGES).last().unwrap() as f64;
            let fill = 1024.0; // the window's 4 MiB, all fresh
            let want = (fill + growth * (W - fill)).min(PAGES as f64);
            eprintln!("growth {growth}, size {size} pages: {got} pages written, want {want}");
            assert!((got / want - 1.0).abs() < 0.15, "{spec}: {got} vs {want}");
        }
        // Past the logical space, fresh writes wrap: the footprint is the whole space.
        let reqs = requests("footprint:growth=1,drive_writes=1.5", 4096, 1);
        assert_eq!(*footprint_curve(&reqs, 4096).last().unwrap(), 4096);
    }

    #[test]
    fn theta_favours_the_newest_pages_of_the_window() {
        // A 100-page window; rewrites counted by recency rank (0 = newest fresh page).
        let hits = |theta: f64| {
            let spec = format!("footprint:growth=0.05,window=400KiB,theta={theta},requests=200000");
            let mut fresh_index = std::collections::HashMap::new();
            let mut by_rank = vec![0u64; 100];
            for r in requests(&spec, 1 << 16, 2) {
                let n = fresh_index.len() as u64;
                match fresh_index.get(&r.lpn) {
                    None => {
                        fresh_index.insert(r.lpn, n);
                    }
                    Some(&i) => by_rank[(n - 1 - i) as usize] += 1,
                }
            }
            let newest: u64 = by_rank[..10].iter().sum();
            let oldest: u64 = by_rank[90..].iter().sum();
            (newest as f64, oldest as f64)
        };
        let (newest, oldest) = hits(0.9);
        eprintln!("theta 0.9: newest tenth {newest}, oldest tenth {oldest}");
        assert!(newest > 3.0 * oldest, "{newest} vs {oldest}");
        let (newest, oldest) = hits(0.0);
        assert!((newest / oldest - 1.0).abs() < 0.1, "{newest} vs {oldest}");
    }

    #[test]
    fn paused_phases_are_flat() {
        // Phases of 1024 pages, every other one paused; a 10-page window.
        let reqs = requests(
            "footprint:growth=0.5,window=40KiB,phase=4MiB,pause=0.5,bytes=32MiB",
            1 << 18,
            3,
        );
        let curve = footprint_curve(&reqs, 1 << 18);
        let at_phase_end: Vec<u64> = (1..=8).map(|i| curve[i * 1024 - 1]).collect();
        eprintln!("footprint at the end of each phase: {at_phase_end:?}");
        for (i, pair) in at_phase_end.windows(2).enumerate() {
            let grew = pair[1] - pair[0];
            if i % 2 == 0 {
                assert_eq!(grew, 0, "phase {} is paused", i + 1);
            } else {
                assert!((400..=624).contains(&grew), "phase {} grew {grew}", i + 1);
            }
        }
    }

    #[test]
    fn a_seed_gives_one_request_stream() {
        let spec = "footprint:growth=0.3,theta=0.8,phase=1MiB,pause=0.5,read=0.3,trim=0.1,\
                    size=8KiB,iops=5000,requests=20000";
        let a = requests(spec, 1 << 16, 7);
        assert_eq!(a, requests(spec, 1 << 16, 7));
        assert_ne!(a, requests(spec, 1 << 16, 8));
        assert!(a.iter().all(|r| r.lpn % 2 == 0 && r.pages == 2));
    }

    #[test]
    fn bad_values_name_the_key() {
        for (spec, key) in [
            ("footprint:growth=2", "growth = 2"),
            ("footprint:growth=-0.1", "growth = -0.1"),
            ("footprint:window=0", "window = 0"),
            ("footprint:window=8KiB,size=16KiB", "window = 8192"),
            ("footprint:pause=1,phase=1MiB", "pause = 1"),
            ("footprint:pause=0.5", "pause = 0.5"),
            ("footprint:theta=-1", "theta = -1"),
            ("footprint:phase=lots", "phase = lots"),
            ("footprint:colour=red", "unknown key `colour`"),
        ] {
            match WorkloadSpec::parse(spec) {
                Err(crate::Error::Workload { reason, .. }) => {
                    assert!(reason.contains(key), "{spec}: {reason}")
                }
                other => panic!("{spec}: {other:?}"),
            }
        }
    }

    proptest! {
        /// Requests stay in the space, reads hit written pages only, each write adds at
        /// most one request's pages, and none once the window is full in a paused phase.
        #[test]
        fn footprint_invariants(
            pages in 8u64..3000,
            growth in 0.0f64..=1.0,
            window in 1u64..64,
            size in 1u64..4,
            phase in 1u64..300,
            pause in 0.0f64..0.95,
            read in 0.0f64..0.5,
            seed in any::<u64>(),
        ) {
            let spec = format!(
                "footprint:growth={growth},window={}KiB,size={}KiB,phase={}KiB,pause={pause},\
                 read={read},requests=3000",
                4 * window.max(size), 4 * size, 4 * phase
            );
            let m = Footprint::new(1, 0.0, 1, 0.0, phase, pause);
            let window_slots = window.max(size).div_ceil(size).min((pages / size).max(1));
            let mut seen = vec![false; pages as usize];
            let (mut written, mut fresh_writes, mut distinct) = (0u64, 0u64, 0u64);
            for r in requests(&spec, pages, seed) {
                prop_assert!(r.pages >= 1 && r.lpn + r.pages as u64 <= pages, "{:?}", r);
                let range = r.lpn as usize..(r.lpn + r.pages as u64) as usize;
                if r.op != Op::Write {
                    if written > 0 {
                        prop_assert!(seen[range].iter().all(|&s| s), "{:?}", r);
                    }
                    continue;
                }
                let new = seen[range.clone()].iter().filter(|&&s| !s).count() as u64;
                seen[range].iter_mut().for_each(|s| *s = true);
                prop_assert!(new == 0 || new == r.pages as u64, "{:?}", r);
                if new > 0 {
                    fresh_writes += 1;
                    prop_assert!(
                        fresh_writes <= window_slots || !m.paused(written),
                        "grew in a paused phase at {}", written
                    );
                }
                distinct += new;
                written += r.pages as u64;
            }
            prop_assert!(distinct <= pages);
        }
    }
}
