//! Content fingerprints and the hashes that make them.
//!
//! A fingerprint is a 64-bit stand-in for what a 4 KiB page holds: two writes with the
//! same fingerprint write the same content, and the simulator never sees the data
//! itself. Hashed traces carry one digest per chunk they write; the `values` workload
//! draws fingerprints directly.
//!
//! - [`fold128`] turns a trace's digest into a fingerprint: the high 64 bits xor the
//!   low 64 (an MD5 in FIU traces; 64-bit hashes, as in pgbench CSV and nbdkit logs,
//!   pass through unchanged).
//! - [`combine`] derives one fingerprint from several, order-sensitively: the sector
//!   hashes of a page gathered from 512-byte FIU lines, or the value given to a page
//!   whose content is not described by one whole hash of the trace.
//!
//! [`MixHasher`], the MurmurHash3 64-bit finaliser, is the mixing round of [`combine`]
//! and the hasher of [`FpMap`], the maps keyed by fingerprints or page numbers.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map from a 64-bit key (a fingerprint or a page number), hashed by [`MixHasher`].
pub type FpMap<V> = HashMap<u64, V, BuildHasherDefault<MixHasher>>;

/// A hasher for `u64` keys: the MurmurHash3 64-bit finaliser.
#[derive(Clone, Copy, Debug, Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    #[inline]
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 ^= x;
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.0 ^= u64::from(x);
    }
}

/// Fold a 128-bit digest (MD5) into a 64-bit fingerprint.
#[inline]
pub fn fold128(x: u128) -> u64 {
    (x as u64) ^ ((x >> 64) as u64)
}

/// Combine fingerprints of consecutive chunks into one (order-sensitive).
#[inline]
pub fn combine(acc: u64, next: u64) -> u64 {
    let mut h = MixHasher(acc.rotate_left(23) ^ next.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    h.write_u64(0);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_and_combines() {
        assert_eq!(fold128(0x0000_0000_0000_0001_0000_0000_0000_0003), 2);
        assert_ne!(combine(1, 2), combine(2, 1));
    }
}
