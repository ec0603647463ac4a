//! The random steps and the fixed sequence, the values writes carry, the case counts.

use proptest::prelude::*;
use zombiesim::device::WriteHint;

/// A logical page: `hot` ones (three in four) fall in the first 24 pages, so blocks
/// mix hot and cold pages; the rest anywhere (taken modulo the logical pages).
fn lpn() -> impl Strategy<Value = u64> {
    prop_oneof![3 => 0u64..24, 1 => 0u64..1024]
}

#[derive(Clone, Debug)]
pub enum Step {
    /// Write `pages` pages from `lpn` (FUA: through the buffer to flash).
    Write(u64, u32, bool),
    Read(u64),
    Trim(u64),
    Flush,
    /// `Device::power_loss`: a volatile buffer loses its dirty pages.
    PowerLoss,
    /// A clean restart: a flush, then the power-off (what `device.restart_at` runs).
    Restart,
    /// The host says the page has a dirty newer copy above the device (`true`), or that
    /// it lost it (`false`).
    Zombie(u64, bool),
}

pub fn step() -> impl Strategy<Value = Step> {
    let pages = prop_oneof![4 => Just(1u32), 1 => 2u32..=8];
    // Zombie hints fall anywhere (mostly on cold pages, which keep them until a
    // power loss: GC then meets them); a power loss or restart every 25 steps or so.
    prop_oneof![
        40 => (lpn(), pages, prop::bool::weighted(0.1)).prop_map(|(l, n, f)| Step::Write(l, n, f)),
        12 => lpn().prop_map(Step::Read),
        4 => lpn().prop_map(Step::Trim),
        4 => Just(Step::Flush),
        2 => Just(Step::PowerLoss),
        1 => Just(Step::Restart),
        12 => (0u64..1024, prop::bool::weighted(0.8)).prop_map(|(l, z)| Step::Zombie(l, z)),
    ]
}

/// One case: the steps, whether the device is filled (and flushed) first so that GC
/// runs from the start, and the buffer's size in pages.
pub fn case() -> impl Strategy<Value = (Vec<Step>, bool, u64)> {
    (
        prop::collection::vec(step(), 1..300),
        prop::bool::weighted(0.75),
        prop::sample::select(vec![1u64, 3, 8, 24]),
    )
}

/// The placement identifier a write of `lpn` carries: 0 to 16 by the page, so that
/// under FDP every handle is written and some identifiers are invalid (placed on the
/// default handle); the other placements read no hint.
pub fn placement(lpn: u64) -> WriteHint {
    WriteHint {
        stream: Some((shuffle(lpn) % 17) as u16),
        lifetime: None,
    }
}

/// Nanoseconds between steps on the device's clock (retention refresh, compulsory
/// flushes): 20 ms.
pub const STEP_NS: u64 = 20_000_000;

/// The content value of the `k`-th page write of a run with content-aware flash: half
/// from an alphabet of 16 (so a write finds its value live, deduplicated, or dead,
/// revived), the other half unique (never the alphabet's, nor the fill's values: the
/// fill writes `1..=n`).
pub fn content_value(k: u64) -> u64 {
    let z = shuffle(k);
    if z & 1 == 0 {
        1 + (z >> 1) % 16
    } else {
        1 << 32 | k
    }
}

/// SplitMix64: a fixed pseudo-random shuffle of `k`.
pub fn shuffle(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One long fixed sequence of steps (proptest's deterministic runner), on a filled
/// device with an 8-page buffer.
pub fn fixed_steps() -> Vec<Step> {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    prop::collection::vec(step(), 1500)
        .new_tree(&mut runner)
        .unwrap()
        .current()
}

/// Cases per test: `PROPTEST_CASES` when set, else `default`.
pub fn cases(default: u32) -> ProptestConfig {
    // The default configuration reads PROPTEST_CASES (and the other PROPTEST_ keys).
    let cfg = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_some() {
        cfg
    } else {
        ProptestConfig {
            cases: default,
            ..cfg
        }
    }
}
