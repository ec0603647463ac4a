//! Hash maps keyed by fingerprints or page numbers.
//!
//! Fingerprints are already uniformly distributed, and page numbers need only a cheap
//! mix, so the maps use one multiply-xorshift round (the MurmurHash3 finaliser,
//! [`MixHasher`]) instead of the standard library's DoS-resistant SipHash: the key set
//! comes from the simulation, not from an adversary.

pub use crate::fingerprint::FpMap;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps() {
        let mut m: FpMap<u32> = FpMap::default();
        for i in 0..1000u64 {
            m.insert(i, i as u32);
        }
        assert_eq!(m.get(&999), Some(&999));
    }
}
