//! Content fingerprints for synthetic writes: value popularity independent of address.
//!
//! The `values` workload writes single pages at uniformly random addresses (reads and
//! trims as the common keys say); each write's content is drawn here:
//!
//! - with probability `unique`, a value never written before (a fresh counter, mixed);
//! - otherwise a value of a catalog of `catalog` values, rank `r` with probability
//!   ∝ `1 / r^zipf` (rand_distr's Zipf: rejection-inversion, O(1) per draw).
//!
//! Ranks are mixed into 64-bit fingerprints (SplitMix64 finaliser) under a per-run salt,
//! so fingerprints look like content hashes; the unique stream uses another salt so it
//! never meets the catalog. Address and value draws come from the same seeded stream,
//! so a spec and a seed give the same requests whatever the device does.

use rand::RngExt;
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

/// How a synthetic write's content fingerprint is drawn.
#[derive(Clone, Debug)]
pub struct ValueModel {
    unique: f64,
    zipf: Zipf<f64>,
    catalog: u64,
    next_unique: u64,
    salt: u64,
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
            zipf: Zipf::new(catalog as f64, zipf).expect("zipf exponent checked when parsed"),
            catalog,
            next_unique: 0,
            salt: mix(seed ^ 0x7661_6c75_6573),
        }
    }

    /// The fingerprint of the next write.
    #[inline]
    pub fn draw(&mut self, rng: &mut Pcg64Mcg) -> u64 {
        if self.unique > 0.0 && rng.random::<f64>() < self.unique {
            self.next_unique += 1;
            mix(self.next_unique ^ !self.salt).rotate_left(17) ^ 0xA5A5
        } else {
            let rank = (self.zipf.sample(rng) as u64).clamp(1, self.catalog);
            mix(rank.wrapping_add(self.salt))
        }
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
        for _ in 0..n {
            *counts.entry(m.draw(&mut rng)).or_default() += 1;
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
                .map(|_| m.draw(&mut rng))
                .collect::<std::collections::HashSet<_>>()
        };
        assert_eq!(all_unique.len(), 1000);
    }
}
