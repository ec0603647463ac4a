//! The run's independent random streams (workload, preconditioning, GC), each seeded
//! from the run seed, so two runs that differ only in GC policy see the same requests.

/// Independent seeded streams.
pub(super) const STREAM_WORKLOAD: u64 = 1;
pub(super) const STREAM_PRECONDITION: u64 = 2;
pub(super) const STREAM_GC: u64 = 3;

/// Derive the seed of one random stream from the run seed (SplitMix64).
pub fn stream_seed(seed: u64, stream: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
