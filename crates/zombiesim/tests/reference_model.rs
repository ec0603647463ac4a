//! Property tests: random write / trim / read sequences against a plain map.
//!
//! For every victim policy, GC frontier and GC scope, the page-mapped FTL must
//! agree with a `HashMap` of what was last written, the integrity oracle must hold
//! on every read, and every invariant must hold at the end.

use proptest::prelude::*;
use std::collections::HashMap;
use zombiesim::config::{GcFrontier, GcScope};
use zombiesim::ftl::{Ftl, FtlExt, PageMappedFtl};
use zombiesim::Config;

#[derive(Clone, Debug)]
enum Op {
    Write(u64),
    Trim(u64),
    Read(u64),
}

fn small_config(policy: &str, frontier: GcFrontier, scope: GcScope) -> Config {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.channels".into(), "2".into()),
        ("flash.chips_per_channel".into(), "1".into()),
        ("flash.planes_per_die".into(), "2".into()),
        ("flash.blocks_per_plane".into(), "16".into()),
        ("flash.pages_per_block".into(), "8".into()),
        ("ftl.over_provisioning".into(), "0.8".into()),
        ("gc.policy".into(), policy.into()),
    ])
    .unwrap();
    cfg.ftl.gc_frontier = frontier;
    cfg.gc.scope = scope;
    cfg.validate().unwrap();
    cfg
}

/// One plane, shared frontier, GC at the last free block: the setting of the
/// Zombie Chasing worked example.
fn single_plane_low_one(policy: &str) -> Config {
    let mut cfg = small_config(policy, GcFrontier::Shared, GcScope::Device);
    cfg.set_many(&[
        ("flash.channels".into(), "1".into()),
        ("flash.planes_per_die".into(), "1".into()),
        ("flash.blocks_per_plane".into(), "40".into()),
        ("gc.low_watermark".into(), "1".into()),
        ("gc.high_watermark".into(), "1".into()),
    ])
    .unwrap();
    cfg
}

fn ops(logical: u64) -> impl Strategy<Value = Vec<Op>> {
    // Skew towards a hot subset so GC sees blocks with varied valid counts.
    let lpn = prop_oneof![3 => 0..logical.min(16), 1 => 0..logical];
    let op = prop_oneof![
        8 => lpn.clone().prop_map(Op::Write),
        1 => lpn.clone().prop_map(Op::Trim),
        2 => lpn.prop_map(Op::Read),
    ];
    prop::collection::vec(op, 1..2500)
}

const POLICIES: [&str; 6] = [
    "greedy",
    "cost-benefit",
    "fifo",
    "random",
    "d-choices:3",
    "windowed-greedy:4",
];

fn check(
    policy: &str,
    frontier: GcFrontier,
    scope: GcScope,
    seq: &[Op],
) -> Result<(), TestCaseError> {
    check_config(&small_config(policy, frontier, scope), seq)
}

fn check_config(cfg: &Config, seq: &[Op]) -> Result<(), TestCaseError> {
    let cfg = cfg.clone();
    let mut ftl = PageMappedFtl::new(&cfg, 42, true).unwrap();
    let mut reference: HashMap<u64, ()> = HashMap::new();
    for op in seq {
        match *op {
            Op::Write(l) => {
                ftl.write(l).unwrap();
                reference.insert(l, ());
            }
            Op::Trim(l) => {
                ftl.trim(l).unwrap();
                reference.remove(&l);
            }
            // The oracle inside the FTL checks that the read finds the newest version.
            Op::Read(l) => ftl
                .read(l)
                .map_err(|e| TestCaseError::fail(e.to_string()))?,
        }
    }
    ftl.verify()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for l in 0..ftl.logical_pages() {
        prop_assert_eq!(
            ftl.lookup(l).is_some(),
            reference.contains_key(&l),
            "page {}",
            l
        );
    }
    let c = ftl.counters();
    prop_assert_eq!(c.programs.total(), c.host_write_pages + c.gc_pages_copied);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_matches_the_reference_separate_frontier(seq in ops(120)) {
        for p in POLICIES {
            check(p, GcFrontier::Separate, GcScope::Device, &seq)?;
        }
    }

    #[test]
    fn every_policy_matches_the_reference_shared_frontier(seq in ops(120)) {
        for p in POLICIES {
            check(p, GcFrontier::Shared, GcScope::Device, &seq)?;
        }
    }

    #[test]
    fn greedy_gc_at_the_last_free_block_matches_the_reference(seq in ops(120)) {
        for p in ["greedy", "cost-benefit"] {
            check_config(&single_plane_low_one(p), &seq)?;
        }
    }

    #[test]
    fn die_and_plane_scopes_match_the_reference(seq in ops(120)) {
        for scope in [GcScope::Die, GcScope::Plane] {
            for p in ["greedy", "cost-benefit"] {
                check(p, GcFrontier::Separate, scope, &seq)?;
            }
        }
    }
}
