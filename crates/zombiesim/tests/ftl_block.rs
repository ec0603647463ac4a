//! The block-mapped FTL: random write / trim / read sequences against a plain map
//! (the integrity oracle on every read, every invariant at the end), its
//! read-modify-write merges, and runs through the device with a write buffer and a
//! power loss.

use proptest::prelude::*;
use std::collections::HashMap;
use zombiesim::ftl::{BlockMappedFtl, Ftl, FtlExt};
use zombiesim::stats::Cause;
use zombiesim::Config;

use crate::common;

/// A small block-mapped device: 2 planes × 16 blocks × 8 pages.
fn small(settings: &[(&str, &str)]) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    let mut pairs: Vec<(String, String)> = vec![
        ("flash.channels".into(), "1".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.planes_per_die".into(), "2".into()),
        ("flash.blocks_per_plane".into(), "16".into()),
        ("flash.pages_per_block".into(), "8".into()),
        ("ftl.over_provisioning".into(), "0.3".into()),
        ("ftl.kind".into(), "block".into()),
        ("precondition.random_drive_writes".into(), "0".into()),
    ];
    pairs.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    cfg.set_many(&pairs).unwrap();
    cfg
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64),
    Trim(u64),
    Read(u64),
}

fn ops(logical: u64) -> impl Strategy<Value = Vec<Op>> {
    let lpn = prop_oneof![3 => 0..24u64, 1 => 0..logical];
    let op = prop_oneof![
        8 => lpn.clone().prop_map(Op::Write),
        1 => lpn.clone().prop_map(Op::Trim),
        2 => lpn.prop_map(Op::Read),
    ];
    prop::collection::vec(op, 1..1500)
}

/// Run `seq` on a fresh FTL, checking against a map of what was last written.
fn check(seq: &[Op]) -> Result<BlockMappedFtl, TestCaseError> {
    let cfg = small(&[]);
    let mut ftl = BlockMappedFtl::new(&cfg, true).unwrap();
    let mut reference: HashMap<u64, u64> = HashMap::new();
    for (i, op) in seq.iter().enumerate() {
        match *op {
            Op::Write(l) => {
                ftl.write_value(l, i as u64).unwrap();
                reference.insert(l, i as u64);
            }
            Op::Trim(l) => {
                ftl.trim(l).unwrap();
                reference.remove(&l);
            }
            Op::Read(l) => ftl
                .read(l)
                .map_err(|e| TestCaseError::fail(e.to_string()))?,
        }
    }
    ftl.verify()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let oracle = ftl.oracle().unwrap();
    for l in 0..ftl.logical_pages() {
        prop_assert_eq!(
            ftl.mapped(l).is_some(),
            reference.contains_key(&l),
            "page {}",
            l
        );
        prop_assert_eq!(oracle.content_of(l as usize), reference.get(&l).copied());
    }
    let c = ftl.counters();
    prop_assert_eq!(c.programs.total(), c.host_write_pages + c.gc_pages_copied);
    prop_assert_eq!(c.merges[0] + c.merges[1], 0);
    prop_assert_eq!(c.erases.total(), c.merges[2]);
    Ok(ftl)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn block_mapping_agrees_with_a_map(seq in ops(96)) {
        check(&seq)?;
    }
}

#[test]
fn a_sequential_fill_merges_nothing_and_an_update_rewrites_the_block() {
    let cfg = small(&[]);
    let mut ftl = BlockMappedFtl::new(&cfg, true).unwrap();
    for l in 0..ftl.logical_pages() {
        ftl.write(l).unwrap();
    }
    let c = ftl.counters();
    assert_eq!(c.merges, [0, 0, 0]);
    assert_eq!(c.programs.total(), ftl.logical_pages());
    // Pages are in place: offset k of the data block.
    let p0 = ftl.mapped(8).unwrap();
    assert_eq!(ftl.mapped(13), Some(p0 + 5));
    // Updating one page copies the other 7 and erases the old block.
    ftl.write(13).unwrap();
    let d = ftl.counters().since(&c);
    assert_eq!(d.merges, [0, 0, 1]);
    assert_eq!(d.programs.get(Cause::MergeFull), 7);
    assert_eq!(d.reads.get(Cause::MergeFull), 7);
    assert_eq!(d.programs.get(Cause::Host), 1);
    assert_eq!(d.erases.get(Cause::MergeFull), 1);
    assert_eq!((d.gc_invocations, d.gc_victims), (1, 1));
    assert_eq!(ftl.mapped(13), Some(ftl.mapped(8).unwrap() + 5));
    assert_ne!(ftl.mapped(8), Some(p0));
    ftl.verify().unwrap();
}

#[test]
fn writes_above_the_write_pointer_go_in_place_and_below_it_merge() {
    let cfg = small(&[]);
    let mut ftl = BlockMappedFtl::new(&cfg, true).unwrap();
    ftl.write(3).unwrap();
    ftl.write(6).unwrap(); // in place: above the write pointer
    assert_eq!(ftl.counters().merges, [0, 0, 0]);
    ftl.write(5).unwrap(); // below it: page 5 was skipped and cannot be programmed
    assert_eq!(ftl.counters().merges, [0, 0, 1]);
    // A trimmed page is gone; its block stays mapped.
    ftl.trim(3).unwrap();
    assert_eq!(ftl.mapped(3), None);
    assert!(ftl.mapped(5).is_some());
    ftl.read(3).unwrap();
    ftl.verify().unwrap();
}

/// Writes through the device with a write buffer (LRU), a power loss in the middle:
/// every page reads what the host last wrote (or, for a page the loss took, an
/// older write), and every invariant holds.
fn device_run(kind_settings: &[(&str, &str)], seed: u64, steps: usize) {
    let mut settings = vec![("device.buffer", "32KiB"), ("device.buffer_policy", "lru")];
    settings.extend_from_slice(kind_settings);
    let c = common::power_loss_run(&small(&settings), seed, steps, 20);
    assert!(c.merges[2] > 0);
}

#[test]
fn through_the_device_with_a_buffer_and_a_power_loss() {
    for seed in 1..4 {
        device_run(&[], seed, 3000);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random request streams through the device.
    #[test]
    fn random_runs_through_the_device_verify(seed in any::<u64>()) {
        device_run(&[], seed, 3000);
    }
}
