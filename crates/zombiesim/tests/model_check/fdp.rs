//! FDP (page mapping): every handle count, isolation and group count, buffered or not.

use super::combos::DEVICE;
use super::run::run_config;
use super::steps::{case, cases};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use zombiesim::Config;

/// An FDP device (page mapping): 2 planes (2 dies) × 64 blocks × 8 pages of 512 B, OP
/// 100% (for up to 16 open reclaim units per group and GC's watermark), `handles`
/// handles in `groups` reclaim groups, initially or persistently isolated, z-greedy
/// over the RUs' summed statistics with the zombie stream (one group), above a
/// device buffer of `buffer_pages` pages (0: none).
fn fdp_config(
    handles: u32,
    isolation: &str,
    groups: u32,
    buffer_pages: u64,
) -> zombiesim::Result<Config> {
    let mut pairs: Vec<(String, String)> = DEVICE
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    // GC destinations (one, or one per handle; the zombie stream) each may need a fresh RU.
    let zombie = groups == 1;
    let low = if isolation == "persistent" {
        handles
    } else {
        1
    } + u32::from(zombie)
        + 1;
    pairs.extend(
        [
            ("flash.blocks_per_plane", "64".to_string()),
            ("ftl.over_provisioning", "1.0".to_string()),
            ("fdp.enabled", "true".to_string()),
            ("fdp.handles", handles.to_string()),
            ("fdp.reclaim_groups", groups.to_string()),
            ("fdp.isolation", isolation.to_string()),
            ("gc.policy", "z-greedy".to_string()),
            ("gc.zombie_block", zombie.to_string()),
            ("gc.low_watermark", low.to_string()),
            ("gc.high_watermark", low.to_string()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    if buffer_pages > 0 {
        pairs.push(("device.buffer".into(), format!("{}", buffer_pages * 512)));
    }
    let mut cfg = Config::preset("default")?;
    cfg.set_many(&pairs)?;
    Ok(cfg)
}

proptest! {
    #![proptest_config(cases(96))]

    /// FDP: every handle count 1-8, the three isolations (initial, persistent, and
    /// initial into the last handle's RU), one or two reclaim groups, with
    /// and without a (volatile) device buffer; writes name handles (and invalid
    /// identifiers), with power losses, restarts and zombie hints among the steps.
    #[test]
    fn page_fdp(
        (steps, fill, buffer) in case(),
        handles in 1u32..=8,
        isolation in prop::sample::select(vec!["initial", "persistent", "initial-last-handle"]),
        groups in 1u32..=2,
        buffered in any::<bool>(),
    ) {
        let buffer_pages = if buffered { buffer } else { 0 };
        let name = format!(
            "fdp {handles} handles, isolation {isolation}, {groups} group(s), buffer {buffer_pages}"
        );
        let cfg = fdp_config(handles, isolation, groups, buffer_pages)
            .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
        cfg.validate().map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
        run_config(&name, &cfg, &steps, fill)?;
    }
}
