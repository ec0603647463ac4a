//! [`Permutation`]: a fixed scrambling of the slots `0..n` that the synthetic address
//! models share (Zipf's hot ranks in `synthetic`, the fresh order of `footprint`).

/// A bijection of `0..n` (xorshift-multiply rounds on the next power of two, with
/// cycle-walking), so Zipf's hot ranks and `footprint`'s fresh slots land all over the
/// space.
#[derive(Clone, Debug)]
pub(super) struct Permutation {
    n: u64,
    bits: u32,
    mask: u64,
}

impl Permutation {
    pub(super) fn new(n: u64) -> Self {
        let bits = (64 - (n.max(2) - 1).leading_zeros()).max(2);
        Permutation {
            n,
            bits,
            mask: if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
        }
    }

    fn round(&self, mut x: u64) -> u64 {
        let half = self.bits / 2;
        x ^= x >> half;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1) & self.mask;
        x ^= x >> half.max(1);
        x = x.wrapping_mul(0xC2B2_AE3D_27D4_EB4F | 1) & self.mask;
        x ^= x >> half;
        x
    }

    pub(super) fn apply(&self, mut x: u64) -> u64 {
        loop {
            x = self.round(x);
            if x < self.n {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 10, 1000, 4097] {
            let p = Permutation::new(n);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n);
                assert!(!seen[y as usize], "n={n}: {y} hit twice");
                seen[y as usize] = true;
            }
        }
    }
}
